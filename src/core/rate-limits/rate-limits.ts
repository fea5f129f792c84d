import { ipKeyGenerator, MemoryStore, type Options, type Store } from 'express-rate-limit';
import type { Config } from '../config/load-config.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { RedisRateLimitStore } from './redis-rate-limit-store.js';

/** CONTRACT §9's rate-limit groups; `none` for health, documentation and keystrokes. */
export type RateGroup = 'chat' | 'models' | 'terminal' | 'workspace' | 'general' | 'none';
export type LimitedGroup = Exclude<RateGroup, 'none'>;

const windowMs = 60_000;

function limitOf(group: LimitedGroup, config: Config): number {
  switch (group) {
    case 'chat':
      return config.RATE_LIMIT_CHAT;
    case 'models':
      return config.RATE_LIMIT_MODELS;
    case 'terminal':
      return config.RATE_LIMIT_TERMINAL;
    case 'workspace':
      return config.RATE_LIMIT_WORKSPACE;
    case 'general':
      return config.API_RATE_LIMIT;
  }
}

/** One counted request: the headers every reply in the group carries, and the 429 when over the limit. */
export interface RateCount {
  headers: Record<string, string>;
  refusal: AppError | null;
}

/**
 * The counters of each group. There is one place that counts a request: the procedure chain's
 * `countRequest` middleware (src/procedures/rate-limit.ts), which every transport passes through;
 * HTTP requests that reach no procedure (an unknown /api path) are counted by the request resolver.
 */
export interface RateLimits {
  /** Counts one request of `ip` in `group`. */
  count(group: LimitedGroup, ip: string): Promise<RateCount>;
}

/**
 * Per-IP, per-group request limits (CONTRACT §9), null while RATE_LIMIT_ENABLED=false. Counters
 * live in Redis when it is configured, so the instances share them; while Redis is down requests
 * pass unlimited rather than all refused.
 */
export function createRateLimits(config: Config, logger: Logger, redis: RedisConnection | undefined): RateLimits | null {
  if (!config.RATE_LIMIT_ENABLED) return null;
  const storeErrors = throttledErrorLog(logger);
  const groups = new Map<LimitedGroup, { store: Store; limit: number }>();
  for (const group of ['chat', 'models', 'terminal', 'workspace', 'general'] as const) {
    const store: Store = redis ? new RedisRateLimitStore(redis.client, `${redis.keyPrefix}rate:${group}:`) : new MemoryStore();
    // Both stores read only the window from their options.
    void store.init?.({ windowMs } as Options);
    groups.set(group, { store, limit: limitOf(group, config) });
  }
  return {
    async count(group, ip) {
      const { store, limit } = groups.get(group) as { store: Store; limit: number };
      let counted;
      try {
        // IPv6 clients by /56 subnet, so one host cannot rotate addresses around its limit.
        counted = await store.increment(ipKeyGenerator(ip));
      } catch (error) {
        storeErrors(error);
        return { headers: {}, refusal: null };
      }
      const resetAt = counted.resetTime?.getTime() ?? Date.now() + windowMs;
      const headers = {
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': String(Math.max(0, limit - counted.totalHits)),
        'X-RateLimit-Reset': String(Math.ceil(resetAt / 1000)),
      };
      if (counted.totalHits <= limit) return { headers, refusal: null };
      const retryAfter = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      const refusal = new AppError('RATE_LIMIT_EXCEEDED', `Too many ${group} requests: at most ${limit} a minute; retry in ${retryAfter} s`, {
        details: { group, limit, retryAfter },
        headers: { ...headers, 'Retry-After': String(retryAfter) },
      });
      return { headers, refusal };
    },
  };
}

/** While Redis is down every request would log its store error; one line a minute says it. */
function throttledErrorLog(logger: Logger): (error: unknown) => void {
  let lastAt = 0;
  return (error: unknown) => {
    const now = Date.now();
    if (now - lastAt < 60_000) return;
    lastAt = now;
    logger.warn({ err: error }, 'rate-limit counters unavailable (Redis down?); requests pass unlimited meanwhile');
  };
}
