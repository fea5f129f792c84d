import { Router, type Request, type Response } from 'express';
import { AppError } from '../../core/errors/app-error.js';
import type { AppDeps } from '../../procedures/context.js';
import { appErrorFrom } from '../../procedures/error-mapping.js';
import type { ChatCompletionStreamHandle } from '../../procedures/openai-compatible/chat-completion.types.js';
import { createCallerFactory } from '../../procedures/trpc.js';
import { createRequestContext } from '../../http/request-context.js';
import type { AppRouter } from '../../routers/app-router.js';
import { procedureAtPath } from '../../routers/procedure-at-path.js';
import { readJsonBody } from '../read-body.js';
import { endAtTokenExpiry } from '../end-at-token-expiry.js';
import { providerKeysOf } from './provider-key.js';
import { sendOpenAIError } from './send-openai-error.js';
import { writeCompletionStream } from './write-completion-stream.js';

/** As in the REST bridge: a body that could not be read fails validation after the guards ran. */
const UNREADABLE_BODY = Symbol('unreadable body');

type Operation = 'chatCompletion' | 'chatCompletionStream' | 'models';

/**
 * The OpenAI-compatible bridge (CONTRACT §10): `POST /v1/chat/completions` and `GET /v1/models`
 * over the openaiCompatible procedures, in OpenAI's wire format and error object. The checks run
 * in the contract's order: unknown path (404, before anything), then the procedure's chain: rate
 * limit, authentication, permission and validation.
 */
export function openAICompatibleRoutes(appRouter: AppRouter, deps: AppDeps): Router {
  const createCaller = createCallerFactory(appRouter);

  /** Runs one procedure for a request; the reply is the caller's to write. */
  async function call(req: Request, res: Response, operation: Operation, input: unknown) {
    const ctx = createRequestContext(deps, req, res);
    const data = await procedureAtPath(createCaller(ctx), `openaiCompatible.${operation}`)(input);
    for (const [name, value] of Object.entries(ctx.response.headers)) res.setHeader(name, value);
    return { ctx, data };
  }

  function fail(req: Request, res: Response, error: unknown, bodyError?: AppError): void {
    if (res.headersSent) {
      // Only a stream can be under way; it stays stored and replayable at /api/streams/:id.
      deps.logger.error({ err: error, path: req.path }, 'writing a completion stream failed');
      res.end();
      return;
    }
    let appError = appErrorFrom(error);
    if (bodyError && appError.code === 'INVALID_REQUEST') appError = bodyError;
    if (appError.status >= 500) deps.logger.error({ err: error, path: req.path }, 'OpenAI-compatible request failed');
    sendOpenAIError(res, appError);
  }

  const routes = Router();

  routes.post('/v1/chat/completions', async (req, res) => {
    let bodyError: AppError | undefined;
    try {
      const body = await readJsonBody(req, deps.config.BODY_LIMIT);
      let input: unknown = UNREADABLE_BODY;
      if (body.ok) input = { ...body.value, ...providerKeysOf(req, deps.config) };
      else bodyError = body.error;
      if (body.ok && body.value?.stream === true) {
        const { ctx, data } = await call(req, res, 'chatCompletionStream', input);
        const handle = data as ChatCompletionStreamHandle;
        // The procedure's guard resolved the caller already; this reads the memoised result.
        const caller = await ctx.identify();
        // /v1 has no resume (CONTRACT §12): the cut at expiry aborts the generation, as a client's close does.
        const stopAtExpiry = endAtTokenExpiry(res, caller.tokenExpiresAt);
        try {
          await writeCompletionStream(res, await deps.streams.locate(caller.id, handle.streamId), {
            identity: { id: handle.id, created: handle.created, model: handle.model },
            includeUsage: handle.includeUsage,
            pingIntervalMs: deps.config.SSE_PING_INTERVAL_MS,
          });
        } finally {
          stopAtExpiry();
        }
        return;
      }
      const { data } = await call(req, res, 'chatCompletion', input);
      res.status(200).json(data);
    } catch (error) {
      fail(req, res, error, bodyError);
    }
  });

  routes.get('/v1/models', async (req, res) => {
    try {
      const { data } = await call(req, res, 'models', {});
      res.status(200).json(data);
    } catch (error) {
      fail(req, res, error);
    }
  });

  // Any other /v1 path or method: OpenAI's 404, decided before authentication (CONTRACT §2).
  routes.use('/v1', (_req, res) => {
    sendOpenAIError(res, new AppError('NOT_FOUND', 'Not found'));
  });
  return routes;
}
