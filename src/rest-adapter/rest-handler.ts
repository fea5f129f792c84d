import type { NextFunction, Request, Response } from 'express';
import type { AppError } from '../core/errors/app-error.js';
import type { AppRouter } from '../routers/app-router.js';
import type { AppDeps, Context } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { sendError } from '../http/error-response.js';
import { createRequestContext } from '../http/request-context.js';
import { seqFromLastEventId, writeSse } from '../realtime/sse-writer.js';
import { endAtTokenExpiry } from './end-at-token-expiry.js';
import { readJsonBody } from './read-body.js';
import { sendJsonReply } from './json-reply.js';
import { procedureCall } from '../routers/procedure-at-path.js';

/**
 * Stands in for a body that could not be used. Every REST input is a zod object, which rejects a
 * symbol, so the procedure runs its guards and then fails validation exactly where a bad field
 * would; the handler then reports the body's own problem instead of "expected object".
 */
const UNREADABLE_BODY = Symbol('unreadable body');

/**
 * The REST bridge: the route table (from the procedures' OpenAPI meta) picks a procedure, which
 * runs through the same caller as every other transport. trpc-to-openapi's own HTTP handler is not
 * used because its error bodies and its 415 for body-less POSTs cannot be replaced (CONTRACT §2).
 */
export function restHandler(appRouter: AppRouter, deps: AppDeps) {
  // Each route's procedure is found once, not through a caller proxy built per request.
  const calls = new Map<string, (ctx: Context, input: unknown) => Promise<unknown>>();
  const callOf = (path: string) => {
    let call = calls.get(path);
    if (!call) calls.set(path, (call = procedureCall(appRouter, path)));
    return call;
  };
  return async function handleRest(req: Request, res: Response, next: NextFunction): Promise<void> {
    // Matched once, by the request resolver that every other layer reads too.
    const resolved = res.locals.resolved;
    if (resolved?.transport !== 'rest') {
      next();
      return;
    }
    const { match, url } = resolved;
    let bodyError: AppError | undefined;
    let input: unknown;
    try {
      if (match.route.method === 'GET' || match.route.method === 'DELETE') {
        const { access_token: _token, ...query } = queryObject(url.searchParams);
        input = { ...query, ...match.params };
      } else {
        const body = await readJsonBody(req, deps.config.BODY_LIMIT);
        if (body.ok) input = { ...body.value, ...match.params };
        else {
          bodyError = body.error;
          input = UNREADABLE_BODY;
        }
      }
    } catch (error) {
      sendError(res, appErrorFrom(error));
      return;
    }

    const sseGet = match.route.meta.sse === true && match.route.method === 'GET';
    const ctx: Context = createRequestContext(deps, req, res, { acceptQueryToken: sseGet });
    try {
      if (sseGet && typeof input === 'object') {
        input = withLastEventId(input as Record<string, unknown>, req.get('last-event-id'));
      }
      const data: unknown = await callOf(match.route.procedure)(ctx, input);
      for (const [name, value] of Object.entries(ctx.response.headers)) res.setHeader(name, value);
      if (match.route.meta.sse) {
        // A finished stream read past its end: no events, and nothing to reconnect for.
        if (ctx.response.status === 204) {
          res.status(204).end();
          return;
        }
        const { streamId, after } = data as { streamId: string; after: number };
        // The procedure's guard resolved the caller already; this reads the memoised result.
        const caller = await ctx.identify();
        // The generation goes on; the client resumes it with a fresh token.
        const stopAtExpiry = endAtTokenExpiry(res, caller.tokenExpiresAt);
        try {
          await writeSse(res, await deps.streams.locate(caller.id, streamId), after, deps.config.SSE_PING_INTERVAL_MS);
        } finally {
          stopAtExpiry();
        }
        return;
      }
      sendJsonReply(res, ctx.response.status ?? 200, data);
    } catch (error) {
      if (res.headersSent) {
        // Only an SSE reply can be under way; its stream stays stored and replayable.
        ctx.logger.error({ err: error, procedure: match.route.procedure }, 'writing a stream failed');
        res.end();
        return;
      }
      let appError = appErrorFrom(error);
      if (bodyError && appError.code === 'INVALID_REQUEST') appError = bodyError;
      if (appError.status >= 500) ctx.logger.error({ err: error, procedure: match.route.procedure }, 'procedure failed');
      sendError(res, appError, ctx.response.headers);
    }
  };
}

/** A reconnecting EventSource names its position in Last-Event-ID; it wins over `?after`. */
function withLastEventId(input: Record<string, unknown>, header: string | undefined): Record<string, unknown> {
  const seq = seqFromLastEventId(header);
  return seq === undefined ? input : { ...input, after: seq };
}

/** Query parameters as an object: one value → string, repeated → array of strings. */
function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    result[key] = values.length === 1 ? (values[0] ?? '') : values;
  }
  return result;
}
