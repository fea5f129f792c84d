import type { RawData, WebSocket } from 'ws';
import type { User } from '../core/auth/permissions.js';
import { AppError } from '../core/errors/app-error.js';
import { newId } from '../core/ids.js';
import { createContextInner, type AppDeps } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createCallerFactory } from '../procedures/trpc.js';
import { appRouter } from '../routers/app-router.js';
import { frameTypeOf, sendErrorFrame, sendFrame } from './socket-frames.js';
import { TokenExpiry } from './token-expiry.js';

const createCaller = createCallerFactory(appRouter);

export interface SocketSession {
  user: User;
  ip: string;
}

/**
 * One client of `/ws` or `/ws/markdown-stream` (CONTRACT §8). A `message` frame with
 * `data.message` starts a chat through the same procedure as the SSE path; each event comes back
 * in a frame whose `data` is `{requestId, event}`, the client's frame id being the requestId.
 * `data.action: "abort"` stops one; `data.action: "auth"` renews the token, without which the
 * socket closes with 4401 when the token expires. A bad frame gets an `error` frame; the socket
 * stays open. A client that leaves stops only its frames: generations run on and stay resumable.
 */
export class MainChannel {
  private readonly streamsByRequest = new Map<string, string>();
  private readonly gone = new AbortController();
  private readonly token: TokenExpiry;

  constructor(
    private readonly socket: WebSocket,
    private readonly session: SocketSession,
    private readonly deps: AppDeps,
    private readonly markdown: boolean,
  ) {
    this.token = new TokenExpiry(socket, session.user);
    socket.on('message', (raw, isBinary) => {
      void this.onFrame(raw, isBinary);
    });
    // The user's pushes (held and finished commands, downloads, conversation changes).
    const unsubscribe = deps.events.subscribe(session.user.id, (event) => {
      sendFrame(socket, 'context_update', event);
    });
    socket.on('close', () => {
      this.gone.abort();
      unsubscribe();
    });
  }

  get userId(): string {
    return this.token.current.id;
  }

  private async onFrame(raw: RawData, isBinary: boolean): Promise<void> {
    const frame = parseFrame(raw, isBinary);
    if ('error' in frame) {
      sendErrorFrame(this.socket, frame.requestId, frame.error);
      return;
    }
    const { requestId, data } = frame;
    try {
      if (data.action === 'abort') await this.abort(data);
      else if (data.action === 'auth') await this.token.renew(this.deps.auth, data.token, this.session.ip);
      else if (data.action !== undefined) throw AppError.invalid('Unknown action: use abort, auth, or none to chat');
      else await this.chat(requestId, data);
    } catch (error) {
      sendErrorFrame(this.socket, requestId, appErrorFrom(error));
    }
  }

  private caller() {
    const user = this.token.current;
    return createCaller(createContextInner(this.deps, { requestId: newId(), ip: this.session.ip, identify: () => Promise.resolve(user) }));
  }

  private async chat(requestId: string, body: Record<string, unknown>): Promise<void> {
    if (this.streamsByRequest.has(requestId)) throw AppError.invalid('A generation with this id is already running on this socket');
    const caller = this.caller();
    const { streamId, after } = this.markdown ? await caller.chat.streamMarkdown(body) : await caller.chat.stream(body);
    this.streamsByRequest.set(requestId, streamId);
    try {
      const job = this.deps.streams.require(this.userId, streamId);
      for await (const batch of job.followInBatches(after, this.gone.signal)) {
        for (const { seq, event } of batch) {
          if (!sendFrame(this.socket, frameTypeOf(event), { requestId, event }, `${streamId}:${seq}`)) return;
        }
      }
    } finally {
      this.streamsByRequest.delete(requestId);
    }
  }

  private async abort(data: Record<string, unknown>): Promise<void> {
    const target = typeof data.requestId === 'string' || typeof data.requestId === 'number' ? String(data.requestId) : undefined;
    const streamId = target === undefined ? undefined : this.streamsByRequest.get(target);
    if (!streamId) throw AppError.notFound('Generation');
    await this.caller().streams.abort({ streamId });
  }
}

interface ClientFrame {
  requestId: string;
  data: Record<string, unknown>;
}

type ParsedFrame = ClientFrame | { requestId: string | null; error: AppError };

/**
 * A client frame: JSON `{type:"message", id, data:{…}}`. Anything else is the error to answer,
 * with the frame's id when it has a usable one (CONTRACT §8).
 */
function parseFrame(raw: RawData, isBinary: boolean): ParsedFrame {
  const refuse = (requestId: string | null, message: string) => ({ requestId, error: AppError.invalid(message) });
  if (isBinary) return refuse(null, 'Frames are JSON text');
  let frame: unknown;
  try {
    frame = JSON.parse(rawText(raw));
  } catch {
    return refuse(null, 'A frame must be JSON');
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return refuse(null, 'A frame must be a JSON object');
  const { type, id, data } = frame as Record<string, unknown>;
  const usableId = (typeof id === 'string' && id !== '' && id.length <= 200) || (typeof id === 'number' && Number.isFinite(id));
  if (!usableId) return refuse(null, 'A frame needs an `id` (a non-empty string or a number)');
  const requestId = String(id);
  if (type !== 'message') return refuse(requestId, 'Unknown frame type: clients send `message` frames');
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return refuse(requestId, '`data` must be an object');
  return { requestId, data: data as Record<string, unknown> };
}

function rawText(raw: RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.from(raw as ArrayBuffer).toString('utf8');
}
