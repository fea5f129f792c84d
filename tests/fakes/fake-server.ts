import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { initialDefaultScript, type Script } from './scripts.js';

export interface RecordedRequest {
  method: string;
  /** Path including the query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, or undefined when there was none or it was not JSON. */
  body: any;
  /**
   * Timestamps are epoch milliseconds with sub-millisecond precision
   * (`performance.timeOrigin + performance.now()`): monotonic within the process and still
   * comparable with `Date.now()` taken in another process (a service under test, a benchmark).
   */
  receivedAt: number;
  /** Set when the client closed the connection before the fake finished its response (abort detection). */
  closedAt?: number;
  finishedAt?: number;
  /** Set when the fake itself destroyed the socket (a scripted refuse, cut or reset). */
  destroyedAt?: number;
}

export interface FakeProvider extends AsyncDisposable {
  /** Base URL as the service config wants it: OpenAI and Anthropic `${origin}/v1`; Ollama `${origin}` (no /v1). */
  url: string;
  origin: string;
  requests: RecordedRequest[];
  /** Only the chat requests (POST /v1/chat/completions, POST /v1/messages, POST /api/chat). */
  chatRequests(): RecordedRequest[];
  /** Scripts consumed one per chat request, in order; when the queue is empty the default script is used. */
  enqueue(...scripts: Script[]): void;
  /** Initially `{ kind: 'text', chunks: ['Hello', ' from', ' fake'] }`; reset() leaves it as set. */
  setDefault(script: Script): void;
  /** Resolves once at least n chat requests arrived (rejects after timeoutMs, default 5000). */
  waitForChatRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves when the chat request with this index has been closed by the client (closedAt set). */
  waitForClientClose(index: number, timeoutMs?: number): Promise<RecordedRequest>;
  /** Clears the recorded requests and the script queue. */
  reset(): void;
  /** Closes all sockets (stalled ones included) and the server. */
  close(): Promise<void>;
}

/** One request as a provider module sees it. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  record: RecordedRequest;
  /** The path without the query string, for routing. */
  pathname: string;
  /** Aborted when the connection closes for any reason, so scripted delays stop early. */
  signal: AbortSignal;
  /** Destroys the socket on purpose (refuse, cut); the fake's own doing is not a client close. */
  destroy(): void;
  /**
   * Resets the connection at once (a TCP RST, as a crashing provider or a proxy that gives up
   * sends): whatever the client has not read yet may be lost with it.
   */
  reset(): void;
}

export interface FakeServerOptions {
  /** Appended to the origin to form `url` ('/v1' for OpenAI and Anthropic, '' for Ollama). */
  basePath: string;
  isChat(method: string, pathname: string): boolean;
  /** Answers one request; `takeScript` pops the queue (or gives the default) and is for chat requests only. */
  handle(exchange: Exchange, takeScript: () => Script): Promise<void>;
}

export const now = (): number => performance.timeOrigin + performance.now();

/** Starts an HTTP server on 127.0.0.1, port 0, that records every request and hands it to `handle`. */
export async function startFakeServer(options: FakeServerOptions): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const queue: Script[] = [];
  let defaultScript = initialDefaultScript;
  // Every change to the recorded requests re-checks these, so waits resolve without polling.
  const watchers = new Set<() => void>();
  const notify = () => {
    for (const watcher of [...watchers]) watcher();
  };
  // Keep-alive and stalled sockets would keep server.close() waiting forever, so close() destroys them.
  const sockets = new Set<Socket>();

  const chatRequests = () => requests.filter((r) => options.isChat(r.method, pathOf(r.path)));
  const takeScript = () => queue.shift() ?? defaultScript;

  let closing: Promise<void> | undefined;
  const server = createServer((req, res) => {
    void serve(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function serve(req: IncomingMessage, res: ServerResponse) {
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body: undefined,
      receivedAt: now(),
    };
    const closed = new AbortController();
    let destroyedByFake = false;
    res.on('finish', () => {
      record.finishedAt = now();
      notify();
    });
    res.on('close', () => {
      if (!res.writableFinished && !destroyedByFake && closing === undefined) {
        record.closedAt = now();
        notify();
      }
      closed.abort();
    });

    record.body = parseJson(await readBody(req));
    requests.push(record);
    notify();

    const exchange: Exchange = {
      req,
      res,
      record,
      pathname: pathOf(record.path),
      signal: closed.signal,
      destroy: () => {
        destroyedByFake = true;
        record.destroyedAt = now();
        req.socket.destroy();
      },
      reset: () => {
        destroyedByFake = true;
        record.destroyedAt = now();
        req.socket.resetAndDestroy();
      },
    };
    try {
      await options.handle(exchange, takeScript);
    } catch (error) {
      // A bug in a fake should show up in the test that hit it, not hang it.
      if (res.headersSent) exchange.destroy();
      else res.writeHead(500, { 'content-type': 'text/plain' }).end(`fake provider failed: ${String(error)}`);
    }
  }

  function waitUntil<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = probe();
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fake provider: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        watchers.delete(check);
      };
      watchers.add(check);
      check();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      for (const socket of sockets) socket.destroy();
    });
    return closing;
  };

  return {
    url: origin + options.basePath,
    origin,
    requests,
    chatRequests,
    enqueue: (...scripts) => queue.push(...scripts),
    setDefault: (script) => {
      defaultScript = script;
    },
    waitForChatRequests: (n, timeoutMs = 5000) =>
      waitUntil(() => (chatRequests().length >= n ? chatRequests() : undefined), timeoutMs, `${n} chat request(s)`),
    waitForClientClose: (index, timeoutMs = 5000) =>
      waitUntil(
        () => {
          const request = chatRequests()[index];
          return request?.closedAt === undefined ? undefined : request;
        },
        timeoutMs,
        `the client to close chat request ${index}`,
      ),
    reset: () => {
      // In place: callers may hold on to `requests`.
      requests.length = 0;
      queue.length = 0;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function pathOf(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  try {
    for await (const part of req) parts.push(part as Buffer);
  } catch {
    // The client went away mid-body; record what arrived.
  }
  return Buffer.concat(parts).toString('utf8');
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
