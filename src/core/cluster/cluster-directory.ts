import type { RedisConnection } from '../redis/redis-connection.js';
import { withTimeout } from '../redis/redis-timeout.js';
import { redisUnavailable } from './cluster-bus.js';

export type HomeKind = 'terminal' | 'stream';

/** What a home says once its thing has ended for good: run the request here, where it will 404 or fail. */
export const ENDED = 'ended';
/** How long an ended thing's tombstone is kept. */
const ENDED_TTL_MS = 60 * 60 * 1000;

/**
 * Which instance holds a terminal or a running generation (CONTRACT §9b: they live where they
 * started). Kept in Redis beside an expiry, so an entry left by a crash goes by itself; a request
 * for it before then finds the instance gone and answers 503.
 */
export class ClusterDirectory {
  constructor(
    private readonly redis: RedisConnection,
    readonly instanceId: string,
  ) {}

  /** Records that this instance holds the thing, for `ttlMs`. Best effort: a failure only means other instances answer 404. */
  async claim(kind: HomeKind, id: string, ttlMs: number): Promise<void> {
    await withTimeout(this.redis.client.set(this.key(kind, id), this.instanceId, { expiration: { type: 'PX', value: ttlMs } })).catch(
      () => undefined,
    );
  }

  /**
   * Marks it ended rather than forgetting it: a pending command of an ended terminal may then be
   * dropped, while one whose terminal's home is unknown (Redis lost the claim) must not be.
   */
  async release(kind: HomeKind, id: string): Promise<void> {
    await withTimeout(this.redis.client.set(this.key(kind, id), ENDED, { expiration: { type: 'PX', value: ENDED_TTL_MS } })).catch(
      () => undefined,
    );
  }

  /**
   * The instance that holds it, ENDED, or null when none is known (unknown id, expired). With Redis
   * unreachable nobody can tell: that is a 503, not a 404 that might be wrong.
   */
  async homeOf(kind: HomeKind, id: string): Promise<string | null> {
    try {
      return await withTimeout(this.redis.client.get(this.key(kind, id)));
    } catch (error) {
      throw redisUnavailable('where this lives is unknown', error);
    }
  }

  /** Called each time Redis (re)connects: claims made while it was down are lost and must be made again. */
  onReconnect(listener: () => void): void {
    this.redis.client.on('ready', listener);
  }

  private key(kind: HomeKind, id: string): string {
    return `${this.redis.keyPrefix}home:${kind}:${id}`;
  }
}
