import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { jsonInSteps, type JsonPieces } from './json-in-steps.js';
import { ProviderHttpError, ProviderProtocolError, ProviderTimeoutError } from './provider-errors.js';
import { Utf8Pieces } from './utf8-pieces.js';

// The one HTTP client the chat engine talks to providers with: node:http on keep-alive agents,
// because a chat answer is a long series of small chunks and fetch's web streams cost about three
// times the CPU per chunk (BENCHMARKS.md, "Chat"). It adds what the contract needs and node:http
// lacks: a first-byte timeout (PROVIDER_TIMEOUT_MS, also applied to each silence inside a stream),
// an abort that closes the socket at once, and statuses other than 2xx as errors.

// Idle sockets are dropped before the server would drop them: Node's agent follows a server's
// `Keep-Alive: timeout=N` hint, and `timeout` covers servers that give none. A request is never
// resent on another socket: a POST the provider may have started must not run twice.
const agentOptions = { keepAlive: true, scheduling: 'lifo' as const, timeout: 15_000 };
const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };

export interface ProviderHttpRequest {
  url: string;
  headers: Record<string, string>;
  /** The JSON body, serialised in steps (json-in-steps.ts) just before it is sent. */
  json: Record<string, unknown>;
  signal: AbortSignal;
  /** PROVIDER_TIMEOUT_MS: for the response headers, then for every silence in the body. */
  timeoutMs: number;
}

export interface ResponseSink {
  /** The provider answered 2xx; the body follows. */
  onResponse(): void;
  /** The next piece of the body, decoded as UTF-8 (never split inside a character). */
  onData(text: string): void;
}

/** A request that ended because its signal aborted; the engine tells aborts apart by the signal. */
function abortError(reason: unknown): Error {
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const error = new Error('The provider request was aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/**
 * Sends one POST and feeds its 2xx body to `sink`; resolves when the body has ended. Rejects with
 * ProviderHttpError (another status), ProviderTimeoutError, an AbortError, a socket error (its
 * `code`), ProviderProtocolError('cut') when the connection closes mid-body, or whatever
 * `sink.onData` throws (the request is then closed).
 */
export function sendToProvider(request: ProviderHttpRequest, sink: ResponseSink): Promise<void> {
  const { signal, timeoutMs } = request;
  if (signal.aborted) return Promise.reject(abortError(signal.reason));
  const { url, headers } = request;
  // Nothing below keeps `request`: its body (the whole history window as JSON) is handed to the
  // socket and not held for as long as the answer streams.
  const send = (body: JsonPieces): Promise<void> => {
    if (signal.aborted) throw abortError(signal.reason);
    let req: ClientRequest;
    try {
      req = post(url, headers, body);
    } catch (error) {
      // node:http throws at once on a URL or header it cannot send (a configured key with a line
      // break, say); callers get that as the promised rejection, like every other failure.
      throw error instanceof Error ? error : new Error('The provider request could not be made', { cause: error });
    }
    return followResponse(req, signal, timeoutMs, sink);
  };
  try {
    const body = jsonInSteps(request.json);
    // An ordinary body is made at once and sent in this same turn (json-in-steps.ts).
    return body instanceof Promise ? body.then(send) : send(body);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error('The provider request could not be made', { cause: error }));
  }
}

function post(target: string, headers: Record<string, string>, body: JsonPieces): ClientRequest {
  const url = new URL(target);
  const secure = url.protocol === 'https:';
  // Copied, then added to: in Node 20's V8, an optimised `{ ...headers, name: value }` gives
  // every object it makes a hidden class of its own, which lives in the old space as long as the
  // request (about 300 B a stream) and as garbage until a full collection after it.
  const sent: Record<string, string> = Object.assign({}, headers);
  sent['content-length'] = String(body.bytes);
  const req = (secure ? httpsRequest : httpRequest)(url, { method: 'POST', agent: secure ? agents.https : agents.http, headers: sent });
  // Sent once the connection is there; the response and errors are listened for in this same tick.
  // A body of ordinary size goes as one string, so node:http sends it with the headers in one
  // write (each piece written on its own was a buffer of its own in one writev, about 15 per
  // chat request); only a large one (a long history window) keeps its pieces, not copied again.
  if (body.bytes <= ONE_WRITE_MAX_BYTES) {
    req.end(body.pieces.join(''));
    return req;
  }
  for (const piece of body.pieces) req.write(piece);
  req.end();
  return req;
}

/** Up to this size a request body is joined into one string before it is written. */
const ONE_WRITE_MAX_BYTES = 64 * 1024;

function followResponse(req: ClientRequest, signal: AbortSignal, timeoutMs: number, sink: ResponseSink): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let responded = false;
    // Why the request was destroyed on our side, so the socket errors that follow report it.
    let destroyedFor: Error | undefined;

    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) resolve();
      else reject(error instanceof Error ? error : new Error('The provider request failed', { cause: error }));
    };
    // The reason is kept here, not passed to destroy(): a body that arrived whole has already
    // handed its socket back to the agent, where an error emitted on it has no listener.
    const destroy = (reason: Error) => {
      destroyedFor ??= reason;
      req.destroy();
      settle(reason);
    };
    const onAbort = () => {
      destroy(abortError(signal.reason));
    };
    // The timeout is checked lazily: a chunk only notes the time it came (a long answer is
    // thousands of chunks, and refreshing a timer for each cost more than the rest of its
    // reading); when the timer fires early because something came meanwhile, it is set again for
    // what is left of the silence.
    let lastActivity = performance.now();
    const onSilence = () => {
      const silent = performance.now() - lastActivity;
      if (silent < timeoutMs) {
        timer = setTimeout(onSilence, Math.ceil(timeoutMs - silent));
        return;
      }
      destroy(new ProviderTimeoutError(timeoutMs, responded ? 'idle' : 'first-byte'));
    };
    let timer = setTimeout(onSilence, timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });

    req.on('error', (error) => {
      settle(destroyedFor ?? error);
    });
    req.on('response', (res: IncomingMessage) => {
      responded = true;
      lastActivity = performance.now();
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        // The body (the provider's error text) is drained, never read: it may quote the key.
        res.resume();
        settle(new ProviderHttpError(status, flatHeaders(res.headers)));
        return;
      }
      sink.onResponse();
      // Decoded here, not by res.setEncoding (see utf8-pieces.ts).
      const text = new Utf8Pieces();
      const feed = (piece: string) => {
        if (settled || piece === '') return;
        try {
          sink.onData(piece);
        } catch (error) {
          destroy(error instanceof Error ? error : new Error('Reading the answer failed', { cause: error }));
        }
      };
      res.on('data', (piece: Buffer) => {
        if (settled) return;
        lastActivity = performance.now();
        feed(text.push(piece));
      });
      res.on('end', () => {
        feed(text.end());
        settle();
      });
      // A body that stops before its end (the socket closed or reset) is a cut answer, whatever
      // the socket error says.
      const lost = () => {
        if (!res.complete) settle(destroyedFor ?? new ProviderProtocolError('The provider closed the connection before its answer ended', 'cut'));
      };
      res.on('close', lost);
      res.on('error', lost);
    });
  });
}
