import type { User } from '../auth/permissions.js';
import { AppError, toAppError, type ErrorCode } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { redisUnavailable, type ClusterBus } from './cluster-bus.js';

/** A procedure call carried to the instance that holds what it is about. */
export interface RemoteCall {
  /** The procedure's dotted path, as the router names it (`terminals.execute`). */
  path: string;
  input: unknown;
  /** The caller as the receiving instance verified it: instances trust each other through Redis. */
  user: User;
  ip: string;
  requestId: string;
}

/** The procedure's data and its say over the HTTP reply (a 202, Retry-After). */
export interface RemoteReply {
  data: unknown;
  status?: number;
  headers: Record<string, string>;
}

export type RemoteHandler = (call: RemoteCall) => Promise<RemoteReply>;

interface SerializedError {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
  headers: Record<string, string>;
}

type BusMessage =
  | { kind: 'call'; callId: string; from: string; call: RemoteCall }
  | { kind: 'reply'; callId: string; reply: RemoteReply }
  | { kind: 'failure'; callId: string; error: SerializedError };

/** How often a caller waiting on a long call (a command running) checks that the owner still lives. */
const ownerCheckIntervalMs = 2000;

export const instanceChannel = (instanceId: string) => `instance:${instanceId}`;

function ownerGone(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The instance that holds this is not reachable; try again later', {
    headers: { 'Retry-After': '5' },
    details: { reason: 'owner_unreachable' },
  });
}

function noReply(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The instance that holds this did not answer in time; check its state before trying again', {
    headers: { 'Retry-After': '5' },
    details: { reason: 'owner_no_reply' },
  });
}

/** The procedures a call may be carried to: only those about something one instance holds. */
const carriedPaths = new Set([
  'terminals.get',
  'terminals.output',
  'terminals.execute',
  'terminals.interrupt',
  'terminals.input',
  'terminals.delete',
  'security.confirm',
  'streams.abort',
]);

/**
 * Request and reply between instances over the bus: each instance listens on its own channel,
 * where calls for it and replies to its calls arrive. A call to an instance nobody listens for
 * (it has stopped or crashed) fails at once with 503; one whose owner dies while it waits fails
 * within a few seconds, and whatever the owner held (a pending command) stays where it was. A
 * reply lost on the way (pub/sub delivers at most once) ends in 503 at the call's deadline.
 */
export class RemoteCalls {
  private readonly waiting = new Map<string, { resolve: (reply: RemoteReply) => void; reject: (error: AppError) => void }>();
  private handler: RemoteHandler | null = null;
  private unsubscribe: (() => Promise<void>) | null = null;

  /** `deadlineMs`: the longest a call may take (a command running to COMMAND_TIMEOUT_MS, and some). */
  constructor(
    private readonly bus: ClusterBus,
    readonly instanceId: string,
    private readonly logger: Logger,
    private readonly deadlineMs: number,
  ) {}

  /** Starts listening; calls for this instance go to `handler`. */
  async listen(handler: RemoteHandler): Promise<void> {
    this.handler = handler;
    this.unsubscribe = await this.bus.subscribe(instanceChannel(this.instanceId), (message) => {
      this.receive(message as BusMessage);
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
    this.unsubscribe = null;
    for (const { reject } of this.waiting.values()) reject(ownerGone());
    this.waiting.clear();
  }

  /** Whether an instance listens now (it has not stopped or crashed); throws when Redis cannot tell. */
  async listening(instanceId: string): Promise<boolean> {
    return (await this.bus.listenerCount(instanceChannel(instanceId))) > 0;
  }

  /** Runs the call on `instanceId` and answers with its reply, or throws its AppError (503 when it is gone). */
  async call(instanceId: string, call: RemoteCall): Promise<RemoteReply> {
    const callId = newId();
    const reply = new Promise<RemoteReply>((resolve, reject) => {
      this.waiting.set(callId, { resolve, reject });
    });
    // It may be settled while the publish below is still awaited; the await after it reads it.
    reply.catch(() => undefined);
    // Pub/sub delivers at most once: a reply lost on the way must not hold the request for ever.
    const deadline = setTimeout(() => {
      this.settle(callId, (entry) => {
        entry.reject(noReply());
      });
    }, this.deadlineMs);
    // Only a definite "nobody listens" ends the wait early: while Redis cannot tell (a blip), the
    // owner may still be running the command, and answering 503 then would be wrong.
    const watch = setInterval(() => {
      this.listening(instanceId).then(
        (listening) => {
          if (listening) return;
          this.settle(callId, (entry) => {
            entry.reject(ownerGone());
          });
        },
        () => undefined,
      );
    }, ownerCheckIntervalMs);
    try {
      const message: BusMessage = { kind: 'call', callId, from: this.instanceId, call };
      const receivers = await this.bus.publish(instanceChannel(instanceId), message).catch((error: unknown) => {
        throw redisUnavailable('the instance that holds this cannot be reached', error);
      });
      if (receivers === 0) {
        this.settle(callId, (entry) => {
          entry.reject(ownerGone());
        });
      }
      return await reply;
    } finally {
      clearInterval(watch);
      clearTimeout(deadline);
      this.waiting.delete(callId);
    }
  }

  private settle(callId: string, action: (entry: { resolve: (reply: RemoteReply) => void; reject: (error: AppError) => void }) => void): void {
    const entry = this.waiting.get(callId);
    if (!entry) return;
    this.waiting.delete(callId);
    action(entry);
  }

  private receive(message: BusMessage): void {
    switch (message.kind) {
      case 'reply':
        this.settle(message.callId, (entry) => {
          entry.resolve(message.reply);
        });
        return;
      case 'failure': {
        const { code, message: text, details, headers } = message.error;
        this.settle(message.callId, (entry) => {
          entry.reject(new AppError(code, text, { details, headers }));
        });
        return;
      }
      case 'call':
        void this.answer(message);
    }
  }

  private async answer(message: Extract<BusMessage, { kind: 'call' }>): Promise<void> {
    let answer: BusMessage;
    try {
      if (!this.handler) throw ownerGone();
      // Redis is trusted like the database, but a message on it can only reach what atHome carries.
      if (!carriedPaths.has(message.call.path)) throw AppError.notFound('Procedure');
      answer = { kind: 'reply', callId: message.callId, reply: await this.handler(message.call) };
    } catch (error) {
      const appError = toAppError(error);
      if (appError.status >= 500 && appError.code !== 'SERVICE_UNAVAILABLE') {
        this.logger.error({ err: error, path: message.call.path }, 'remote call failed');
      }
      answer = {
        kind: 'failure',
        callId: message.callId,
        error: { code: appError.code, message: appError.message, details: appError.details, headers: appError.headers },
      };
    }
    await this.bus.publish(instanceChannel(message.from), answer).catch((error: unknown) => {
      this.logger.warn({ err: error, path: message.call.path }, 'could not send a remote call its reply');
    });
  }
}
