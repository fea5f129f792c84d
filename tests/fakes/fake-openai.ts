import type { ServerResponse } from 'node:http';
import { startFakeServer, type FakeProvider } from './fake-server.js';
import { playScript, type ChatDialect, type Frame } from './play-script.js';
import { argumentsText, fragments, type ChatReply } from './scripts.js';

/** Fake OpenAI Chat Completions API (`/v1/chat/completions`, `/v1/models`). */
export function startFakeOpenAI(options: { apiKey?: string; models?: string[] } = {}): Promise<FakeProvider> {
  const models = options.models ?? ['gpt-4o-mini', 'gpt-4o'];
  let served = 0;
  return startFakeServer({
    basePath: '/v1',
    isChat: (method, pathname) => method === 'POST' && pathname === '/v1/chat/completions',
    handle: async (exchange, takeScript) => {
      const { res, record, pathname } = exchange;
      const method = record.method;
      const serial = ++served;
      res.setHeader('x-request-id', `req_fake${serial}`);
      const refusal = checkKey(record.headers.authorization, options.apiKey);
      if (refusal !== undefined) {
        sendError(res, 401, refusal);
        return;
      }

      if (method === 'POST' && pathname === '/v1/chat/completions') {
        const body = record.body as
          | { model?: unknown; stream?: unknown; stream_options?: { include_usage?: unknown }; logprobs?: unknown; top_logprobs?: unknown }
          | undefined;
        if (body === undefined) {
          sendError(res, 400, { message: 'We could not parse the JSON body of your request.' });
          return;
        }
        const dialect = openAIDialect({
          id: `chatcmpl-fake${serial}`,
          model: typeof body.model === 'string' ? body.model : 'unknown',
          includeUsage: body.stream_options?.include_usage === true,
          // As the real API: `logprobs: true` puts each token's log probability on its chunk.
          logprobs: body.logprobs === true ? (typeof body.top_logprobs === 'number' ? body.top_logprobs : 0) : undefined,
        });
        await playScript(exchange, takeScript(), dialect, body.stream === true);
        return;
      }
      if (method === 'GET' && pathname === '/v1/models') {
        sendJson(res, 200, { object: 'list', data: models.map(modelObject) });
      } else if (method === 'GET' && pathname.startsWith('/v1/models/')) {
        const id = decodeURIComponent(pathname.slice('/v1/models/'.length));
        if (models.includes(id)) sendJson(res, 200, modelObject(id));
        else sendError(res, 404, { message: `The model '${id}' does not exist`, code: 'model_not_found' });
      } else {
        sendError(res, 404, { message: `Invalid URL (${method} ${pathname})` });
      }
    },
  });
}

function modelObject(id: string) {
  return { id, object: 'model', created: 1_715_367_049, owned_by: 'system' };
}

/** Returns why the key is refused, or undefined when no key is required or it matches. */
function checkKey(authorization: string | string[] | undefined, apiKey: string | undefined): ErrorFields | undefined {
  if (apiKey === undefined) return undefined;
  if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ')) {
    return { message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.", code: null };
  }
  if (authorization.slice(7) === apiKey) return undefined;
  return { message: 'Incorrect API key provided.', code: 'invalid_api_key' };
}

interface ErrorFields {
  message: string;
  type?: string;
  code?: string | null;
}

/** OpenAI's error envelope; the types and codes are the ones the real API returns for these statuses. */
export function openAIError(status: number, fields?: ErrorFields) {
  const byStatus: Record<number, ErrorFields> = {
    400: { message: 'Invalid request.', type: 'invalid_request_error', code: null },
    401: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
    403: { message: 'You are not allowed to access this resource.', type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
    404: { message: 'Not found.', type: 'invalid_request_error', code: null },
    429: { message: 'Rate limit reached for requests. Please try again in 20ms.', type: 'requests', code: 'rate_limit_exceeded' },
    500: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', code: null },
    503: { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', code: null },
  };
  const base = byStatus[status] ?? { message: `Fake error ${status}.`, type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null };
  const merged = { ...base, ...fields };
  return { error: { message: merged.message, type: merged.type ?? base.type, param: null, code: merged.code ?? null } };
}

function sendError(res: ServerResponse, status: number, fields: ErrorFields) {
  sendJson(res, status, openAIError(status, fields));
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A text chunk's log probabilities, one token per chunk, with `top` alternatives (deterministic). */
function tokenLogprobs(text: string, top: number) {
  const entry = (token: string, logprob: number) => ({ token, logprob, bytes: [...Buffer.from(token, 'utf8')] });
  const alternatives = Array.from({ length: top }, (_unused, rank) => entry(rank === 0 ? text : `${text}~${rank}`, -0.25 * (rank + 1)));
  return { content: [{ ...entry(text, -0.25), top_logprobs: alternatives }], refusal: null };
}

function openAIDialect(context: { id: string; model: string; includeUsage: boolean; logprobs?: number | undefined }): ChatDialect {
  const created = Math.floor(Date.now() / 1000);
  const envelope = { id: context.id, object: 'chat.completion.chunk', created, model: context.model, system_fingerprint: 'fp_fake' };
  const usageOf = (reply: ChatReply) => ({
    prompt_tokens: reply.usage.input,
    completion_tokens: reply.usage.output,
    total_tokens: reply.usage.input + reply.usage.output,
  });
  // Every chunk carries `usage: null` when usage was asked for, as the real API does.
  const chunk = (choices: unknown[], usage: unknown = null): Frame => ({
    data: sse({ ...envelope, choices, ...(context.includeUsage ? { usage } : {}) }),
  });
  const choice = (delta: object, finishReason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });

  return {
    streamContentType: 'text/event-stream; charset=utf-8',
    streamFrames(reply) {
      const frames: Frame[] = [];
      // The first delta carries the role; for a tools-only answer it also opens the first call.
      const textFirst = reply.chunks.length > 0 || reply.calls.length === 0;
      if (textFirst) frames.push(chunk([choice({ role: 'assistant', content: '', refusal: null })]));
      for (const text of reply.chunks) {
        const withLogprobs = context.logprobs === undefined ? {} : { logprobs: tokenLogprobs(text, context.logprobs) };
        frames.push({ ...chunk([{ ...choice({ content: text }), ...withLogprobs }]), text: true });
      }
      reply.calls.forEach((call, index) => {
        const opening = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
        const delta = !textFirst && index === 0 ? { role: 'assistant', content: null, tool_calls: [opening] } : { tool_calls: [opening] };
        frames.push(chunk([choice(delta)]));
        for (const piece of fragments(argumentsText(call), call.pieces)) {
          frames.push(chunk([choice({ tool_calls: [{ index, function: { arguments: piece } }] })]));
        }
      });
      frames.push(chunk([choice({}, reply.finish)]));
      if (context.includeUsage) frames.push(chunk([], usageOf(reply)));
      frames.push({ data: 'data: [DONE]\n\n' });
      return frames;
    },
    completeBody(reply) {
      const toolCalls = reply.calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: argumentsText(call) },
      }));
      const content = reply.chunks.length > 0 || toolCalls.length === 0 ? reply.chunks.join('') : null;
      const message = { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}), annotations: [] };
      return {
        id: context.id,
        object: 'chat.completion',
        created,
        model: context.model,
        choices: [
          {
            index: 0,
            message,
            logprobs:
              context.logprobs === undefined
                ? null
                : { content: reply.chunks.flatMap((text) => tokenLogprobs(text, context.logprobs ?? 0).content), refusal: null },
            finish_reason: reply.finish,
          },
        ],
        usage: usageOf(reply),
        system_fingerprint: 'fp_fake',
      };
    },
    errorBody: (status) => openAIError(status),
    // The API reports an in-stream failure as a data frame holding its usual error envelope.
    streamErrorFrame: (status = 500) => sse(openAIError(status)),
    malformedStream: 'data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"Hel\n\ndata: <html>upstream proxy error</html>\n\n',
    malformedBody: '{"id":"chatcmpl-broken","object":"chat.completion","choices":[{"message":',
  };
}

function sse(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}
