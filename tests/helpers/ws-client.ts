import { WebSocket, type ClientOptions } from 'ws';

// A WebSocket client for tests: the real `ws` client against the service, its frames queued so a
// test can wait for the ones it expects, and a refused upgrade reported with its HTTP reply.

export interface Frame {
  type: string;
  id: string;
  data: any;
  timestamp: string;
}

export interface TestSocket {
  socket: WebSocket;
  send(frame: unknown): void;
  /** Resolves with the frames received until `stop` returns true for one (that one included). */
  until(stop: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame[]>;
  /** Resolves when the socket closes. */
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export type Connection = { ok: true; client: TestSocket } | { ok: false; status: number; body: any; headers: Record<string, string | string[] | undefined> };

export function wsUrl(httpUrl: string, path: string): string {
  return httpUrl.replace(/^http/, 'ws') + path;
}

export async function connect(url: string, options: ClientOptions = {}): Promise<Connection> {
  const socket = new WebSocket(url, options);
  const frames: Frame[] = [];
  let waiter: (() => void) | undefined;
  socket.on('message', (raw) => {
    // With the default binaryType every message arrives as one Buffer.
    frames.push(JSON.parse((raw as Buffer).toString('utf8')) as Frame);
    waiter?.();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString() });
      waiter?.();
    });
  });
  return new Promise<Connection>((resolve, reject) => {
    socket.once('open', () => {
      let seen = 0;
      resolve({
        ok: true,
        client: {
          socket,
          send: (frame) => {
            socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
          },
          closed,
          close: () => {
            socket.close();
          },
          until: (stop, timeoutMs = 5000) =>
            new Promise<Frame[]>((done, fail) => {
              const collected: Frame[] = [];
              const timer = setTimeout(() => {
                waiter = undefined;
                fail(new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(collected).slice(0, 500)}`));
              }, timeoutMs);
              const check = () => {
                while (seen < frames.length) {
                  const frame = frames[seen++] as Frame;
                  collected.push(frame);
                  if (stop(frame)) {
                    clearTimeout(timer);
                    waiter = undefined;
                    done(collected);
                    return;
                  }
                }
                if (socket.readyState === socket.CLOSED) {
                  clearTimeout(timer);
                  waiter = undefined;
                  fail(new Error(`socket closed before a matching frame; got ${JSON.stringify(collected).slice(0, 500)}`));
                }
              };
              waiter = check;
              check();
            }),
        },
      });
    });
    socket.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        resolve({ ok: false, status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers });
      });
    });
    socket.once('error', (error) => {
      if (socket.readyState !== socket.OPEN) reject(error);
    });
  });
}

/** Connects and fails the test unless the upgrade is accepted. */
export async function open(url: string, options: ClientOptions = {}): Promise<TestSocket> {
  const connection = await connect(url, options);
  if (!connection.ok) throw new Error(`upgrade refused: ${connection.status} ${JSON.stringify(connection.body)}`);
  return connection.client;
}

/** Whether a frame is the end of the generation answering `requestId`. */
export const isDoneOf = (requestId: string) => (frame: Frame) => frame.data?.requestId === requestId && frame.data?.event?.type === 'done';
