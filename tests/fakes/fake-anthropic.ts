import type { ServerResponse } from 'node:http';
import { startFakeServer, type FakeProvider } from './fake-server.js';
import { playScript, type ChatDialect, type Frame } from './play-script.js';
import { argumentsText, argumentsValue, fragments, type ChatReply } from './scripts.js';

/** Fake Anthropic Messages API (`/v1/messages`, `/v1/models`). */
export function startFakeAnthropic(options: { apiKey?: string; models?: string[] } = {}): Promise<FakeProvider> {
  const models = options.models ?? ['claude-sonnet-4-20250514', 'claude-3-5-haiku-20241022'];
  let served = 0;
  return startFakeServer({
    basePath: '/v1',
    isChat: (method, pathname) => method === 'POST' && pathname === '/v1/messages',
    handle: async (exchange, takeScript) => {
      const { res, record, pathname } = exchange;
      const method = record.method;
      const serial = ++served;
      res.setHeader('request-id', `req_fake${serial}`);
      // The real API rejects requests without a version before it looks at anything else.
      if (typeof record.headers['anthropic-version'] !== 'string') {
        sendError(res, 400, 'anthropic-version: header is required');
        return;
      }
      const refusal = checkKey(record.headers, options.apiKey);
      if (refusal !== undefined) {
        sendError(res, 401, refusal);
        return;
      }

      if (method === 'POST' && pathname === '/v1/messages') {
        const body = record.body as { model?: unknown; stream?: unknown } | undefined;
        if (body === undefined) {
          sendError(res, 400, 'There was an error parsing the body of your request.');
          return;
        }
        const model = typeof body.model === 'string' ? body.model : 'unknown';
        await playScript(exchange, takeScript(), anthropicDialect(`msg_fake${serial}`, model), body.stream === true);
      } else if (method === 'GET' && pathname === '/v1/models') {
        sendJson(res, 200, { data: models.map(modelObject), has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null });
      } else if (method === 'GET' && pathname.startsWith('/v1/models/')) {
        const id = decodeURIComponent(pathname.slice('/v1/models/'.length));
        if (models.includes(id)) sendJson(res, 200, modelObject(id));
        else sendError(res, 404, `model: ${id}`);
      } else {
        sendError(res, 404, 'Not Found');
      }
    },
  });
}

function modelObject(id: string) {
  return { type: 'model', id, display_name: id, created_at: '2025-05-14T00:00:00Z' };
}

/** Returns why the key is refused, or undefined when no key is required or it matches. */
function checkKey(headers: Record<string, string | string[] | undefined>, apiKey: string | undefined): string | undefined {
  if (apiKey === undefined) return undefined;
  const key = headers['x-api-key'];
  const authorization = headers.authorization;
  // `authToken` clients send a bearer token instead of x-api-key; the API accepts either.
  const bearer = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice(7) : undefined;
  if (key === undefined && bearer === undefined) return 'x-api-key header is required';
  return key === apiKey || bearer === apiKey ? undefined : 'invalid x-api-key';
}

const errorTypes: Record<number, [type: string, message: string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'An unexpected error has occurred internal to our systems.'],
  529: ['overloaded_error', 'Overloaded'],
};

/** Anthropic's error envelope; the type follows the status as the real API's documented table does. */
export function anthropicError(status: number, message?: string) {
  const [type, fallback] = errorTypes[status] ?? [status >= 500 ? 'api_error' : 'invalid_request_error', `Fake error ${status}.`];
  return { type: 'error', error: { type, message: message ?? fallback } };
}

function sendError(res: ServerResponse, status: number, message: string) {
  sendJson(res, status, anthropicError(status, message));
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const stopReasons = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

function anthropicDialect(id: string, model: string): ChatDialect {
  const event = (type: string, data: object, text = false): Frame => ({
    data: `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`,
    text,
  });

  return {
    streamContentType: 'text/event-stream; charset=utf-8',
    streamFrames(reply: ChatReply) {
      const usage = { input_tokens: reply.usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 };
      const message = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage };
      const frames: Frame[] = [event('message_start', { message })];
      let index = 0;
      // The real API sends a ping right after the first block opens; clients must skip it.
      const open = (block: object) => {
        frames.push(event('content_block_start', { index, content_block: block }));
        if (index === 0) frames.push(event('ping', {}));
      };
      if (reply.chunks.length > 0) {
        open({ type: 'text', text: '' });
        for (const text of reply.chunks) frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }, true));
        frames.push(event('content_block_stop', { index }));
        index++;
      }
      for (const call of reply.calls) {
        open({ type: 'tool_use', id: call.id, name: call.name, input: {} });
        // An empty first fragment is what the API sends; the rest arrive in pieces.
        for (const partial_json of ['', ...fragments(argumentsText(call), call.pieces)]) {
          frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
        }
        frames.push(event('content_block_stop', { index }));
        index++;
      }
      frames.push(
        event('message_delta', { delta: { stop_reason: stopReasons[reply.finish], stop_sequence: null }, usage: { output_tokens: reply.usage.output } }),
        event('message_stop', {}),
      );
      return frames;
    },
    completeBody(reply: ChatReply) {
      const text = reply.chunks.length > 0 ? [{ type: 'text', text: reply.chunks.join('') }] : [];
      const tools = reply.calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: argumentsValue(call) }));
      return {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [...text, ...tools],
        stop_reason: stopReasons[reply.finish],
        stop_sequence: null,
        usage: { input_tokens: reply.usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: reply.usage.output },
      };
    },
    errorBody: (status) => anthropicError(status),
    streamErrorFrame: (status = 529) => `event: error\ndata: ${JSON.stringify(anthropicError(status))}\n\n`,
    malformedStream: 'event: message_start\ndata: {"type":"message_start","message":{"id":\n\nevent: ping\ndata: <html>upstream proxy error</html>\n\n',
    malformedBody: '{"id":"msg_broken","type":"message","content":[{"type":"text","text":',
  };
}
