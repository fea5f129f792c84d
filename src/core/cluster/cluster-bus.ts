import superjson from 'superjson';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import type { RedisClient, RedisConnection } from '../redis/redis-connection.js';
import { withTimeout } from '../redis/redis-timeout.js';
import type { ClusterSignature } from './cluster-signature.js';

export type BusListener = (message: unknown) => void;

/**
 * Redis pub/sub between the instances of one deployment (CONTRACT §9b). Publishing goes through
 * the shared connection; listening needs a connection of its own (a subscribed Redis connection
 * accepts no other commands), which node-redis re-subscribes after a reconnect. Messages are
 * superjson, so dates and sets survive the trip. Channel names get REDIS_KEY_PREFIX.
 *
 * This is the one place messages enter and leave Redis, so it is where they are sealed and
 * checked (CONTRACT §11 "Instances"): a message not sealed with CLUSTER_SECRET for the channel it
 * arrived on, recently and for the first time, reaches no listener.
 */
export class ClusterBus {
  private readonly subscriber: RedisClient;
  private readonly listeners = new Map<string, Set<BusListener>>();
  /** One Redis-side handler per channel, kept so a (re)connection can subscribe it again. */
  private readonly handlers = new Map<string, (raw: string) => void>();
  private readonly leftWhileDown = new Set<string>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly logger: Logger,
    private readonly signature: ClusterSignature,
  ) {
    this.subscriber = redis.client.duplicate();
    // Errors are the main connection's to report (it reconnects in step); without a listener
    // they would crash the process.
    this.subscriber.on('error', () => undefined);
    // Channels asked for while Redis was down are subscribed once it is up; node-redis keeps the
    // ones it had across its own reconnects, and subscribing one again is harmless.
    this.subscriber.on('ready', () => {
      for (const [channel, handler] of this.handlers) void this.subscribeInRedis(channel, handler);
      // Left while the connection was down: node-redis would otherwise subscribe them again.
      for (const channel of this.leftWhileDown) {
        if (!this.handlers.has(channel)) void withTimeout(this.subscriber.unsubscribe(this.redis.keyPrefix + channel)).catch(() => undefined);
      }
      this.leftWhileDown.clear();
    });
    this.subscriber.connect().catch(() => undefined);
  }

  /** The number of instances that received it (0: nobody listens on that channel now). */
  async publish(channel: string, message: unknown): Promise<number> {
    const name = this.redis.keyPrefix + channel;
    return withTimeout(this.redis.client.publish(name, this.signature.seal(name, superjson.stringify(message))));
  }

  /** How many connections listen on the channel: an instance's own channel tells whether it lives. */
  async listenerCount(channel: string): Promise<number> {
    const name = this.redis.keyPrefix + channel;
    const reply = await withTimeout(this.redis.client.pubSubNumSub(name));
    return reply[name] ?? 0;
  }

  /**
   * Listens on a channel; resolves once Redis has confirmed, or at once while Redis is down (the
   * subscription is made when it comes back). Returns the unsubscribe function.
   */
  async subscribe(channel: string, listener: BusListener): Promise<() => Promise<void>> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      const handler = (raw: string) => {
        this.deliver(channel, raw);
      };
      this.handlers.set(channel, handler);
      if (this.subscriber.isReady) await this.subscribeInRedis(channel, handler);
    }
    set.add(listener);
    const listeners = set;
    return async () => {
      listeners.delete(listener);
      if (listeners.size > 0 || this.listeners.get(channel) !== listeners) return;
      this.listeners.delete(channel);
      this.handlers.delete(channel);
      if (this.subscriber.isReady) await withTimeout(this.subscriber.unsubscribe(this.redis.keyPrefix + channel)).catch(() => undefined);
      else this.leftWhileDown.add(channel);
    };
  }

  close(): Promise<void> {
    // A connection still trying to reach Redis just stops.
    if (this.subscriber.isReady) return this.subscriber.close();
    if (this.subscriber.isOpen) this.subscriber.destroy();
    return Promise.resolve();
  }

  private async subscribeInRedis(channel: string, handler: (raw: string) => void): Promise<void> {
    try {
      await withTimeout(this.subscriber.subscribe(this.redis.keyPrefix + channel, handler));
    } catch (error) {
      // The next 'ready' tries again.
      this.logger.debug({ err: error, channel }, 'redis subscribe failed');
    }
  }

  private deliver(channel: string, raw: string): void {
    const opened = this.signature.open(this.redis.keyPrefix + channel, raw);
    if (!opened.ok) {
      // Without the message: it may be an attacker's, and it may carry someone's command.
      this.logger.warn({ channel, reason: opened.reason }, 'dropped a cluster message not signed by an instance of this deployment');
      return;
    }
    let message: unknown;
    try {
      message = superjson.parse(opened.payload);
    } catch (error) {
      this.logger.warn({ err: error, channel }, 'unreadable message on the cluster bus');
      return;
    }
    for (const listener of this.listeners.get(channel) ?? []) {
      try {
        listener(message);
      } catch (error) {
        this.logger.error({ err: error, channel }, 'cluster bus listener failed');
      }
    }
  }
}

/** A 503 for a request that needs Redis while it cannot be reached; `what` says what is missing. */
export function redisUnavailable(what: string, cause: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', `Redis is unreachable, so ${what}; try again later`, {
    headers: { 'Retry-After': '5' },
    details: { reason: 'redis_unreachable' },
    cause,
  });
}
