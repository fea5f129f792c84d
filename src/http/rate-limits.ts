import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, rateLimit, type Store } from 'express-rate-limit';
import type { Config } from '../core/config/load-config.js';
import { AppError } from '../core/errors/app-error.js';
import type { Logger } from '../core/logger.js';
import type { RedisConnection } from '../core/redis/redis-connection.js';
import type { RateGroup } from '../procedures/meta.js';
import { matchRoute, type Route } from '../rest-adapter/route-table.js';
import { sendError } from './error-response.js';
import { RedisRateLimitStore } from './redis-rate-limit-store.js';

export type LimitedGroup = Exclude<RateGroup, 'none'>;

const windowMs = 60_000;

/** CONTRACT §9: no limit and no headers for health and documentation. */
const unlimitedPaths = /^\/api\/(status|openapi\.json|docs)(\/|$)/;

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

/** The counters of each group, for HTTP (as middleware) and for WebSocket frames (`hit`). */
export interface RateLimits {
  limiterFor(group: LimitedGroup): RequestHandler;
  /** Counts one request of `ip` in `group`: the 429 to answer when over the limit, else null. */
  hit(group: LimitedGroup, ip: string): Promise<AppError | null>;
}

function tooMany(group: LimitedGroup, limit: number, retryAfter: number): AppError {
  return new AppError('RATE_LIMIT_EXCEEDED', `Too many ${group} requests: at most ${limit} a minute; retry in ${retryAfter} s`, {
    details: { group, limit, retryAfter },
    headers: { 'Retry-After': String(retryAfter) },
  });
}

/**
 * Per-IP, per-group request limits (CONTRACT §9), null while RATE_LIMIT_ENABLED=false. Counters
 * live in Redis when it is configured, so the instances share them; while Redis is down requests
 * pass unlimited rather than all refused.
 */
export function createRateLimits(config: Config, logger: Logger, redis: RedisConnection | undefined): RateLimits | null {
  if (!config.RATE_LIMIT_ENABLED) return null;
  const storeErrors = throttledErrorLog(logger);
  const groups = new Map<LimitedGroup, { limiter: RequestHandler; store: Store; limit: number }>();
  for (const group of ['chat', 'models', 'terminal', 'workspace', 'general'] as const) {
    const limit = limitOf(group, config);
    const store: Store = redis ? new RedisRateLimitStore(redis.client, `${redis.keyPrefix}rate:${group}:`) : new MemoryStore();
    const limiter = rateLimit({
      windowMs,
      limit,
      store,
      // The same key for HTTP requests and WebSocket frames of one client (IPv6 by /56 subnet).
      keyGenerator: (req) => ipKeyGenerator(req.ip ?? ''),
      legacyHeaders: true,
      standardHeaders: false,
      passOnStoreError: true,
      logger: { warn: storeErrors, error: storeErrors },
      // TRUST_PROXY is the operator's decision (CONTRACT §1); Express has applied it to req.ip.
      validate: { trustProxy: false, xForwardedForHeader: false, keyGeneratorIpFallback: false },
      handler: (_req, res) => {
        sendError(res, tooMany(group, limit, Number(res.getHeader('Retry-After') ?? 60)));
      },
    });
    groups.set(group, { limiter, store, limit });
  }
  return {
    limiterFor: (group) => (groups.get(group) as { limiter: RequestHandler }).limiter,
    async hit(group, ip) {
      const { store, limit } = groups.get(group) as { store: Store; limit: number };
      let counted;
      try {
        counted = await store.increment(ipKeyGenerator(ip));
      } catch (error) {
        storeErrors(error);
        return null;
      }
      if (counted.totalHits <= limit) return null;
      const retryAfter = Math.max(1, Math.ceil(((counted.resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
      return tooMany(group, limit, retryAfter);
    },
  };
}

/**
 * Applies the limits to HTTP requests, before authentication (CONTRACT §2). The group is the
 * procedure's declared `rateGroup`: for REST the matched route's, for /trpc each called
 * procedure's (a batch counts once in every group it touches); any other /api path, unknown ones
 * included, counts in the general group.
 */
export function limitByRoute(limits: RateLimits, routes: readonly Route[], procedureGroups: ReadonlyMap<string, RateGroup>): RequestHandler {
  return function limitRequests(req: Request, res: Response, next: NextFunction): void {
    const groups = groupsOf(req, routes, procedureGroups);
    // Each group's first call sets the headers through its limiter; further calls of a /trpc
    // batch in the same group count too, so a batch is not a way around a limit.
    const chain: RequestHandler[] = groups.map((group, index) =>
      groups.indexOf(group) === index ? limits.limiterFor(group) : countAgain(limits, group),
    );
    const run = (index: number): void => {
      const limiter = chain[index];
      if (!limiter) {
        next();
        return;
      }
      void limiter(req, res, (error?: unknown) => {
        if (error) next(error);
        else run(index + 1);
      });
    };
    run(0);
  };
}

function countAgain(limits: RateLimits, group: LimitedGroup): RequestHandler {
  return (req, res, next) => {
    void limits.hit(group, req.ip ?? '').then((refusal) => {
      if (refusal) sendError(res, refusal);
      else next();
    }, next);
  };
}

/**
 * The groups a request counts in. Paths are matched as the routers match them: the /api and
 * /trpc prefixes without regard to case (Express's default), and for /trpc the procedure names
 * as tRPC reads them, from the last path segment, percent-decoded, comma-separated.
 */
function groupsOf(req: Request, routes: readonly Route[], procedureGroups: ReadonlyMap<string, RateGroup>): LimitedGroup[] {
  const path = req.path;
  const lower = path.toLowerCase();
  if (lower === '/trpc' || lower.startsWith('/trpc/')) {
    let names: string[];
    try {
      names = decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)).split(',');
    } catch {
      names = [];
    }
    const groups = names.map((name) => procedureGroups.get(name) ?? 'general');
    return groups.filter((group): group is LimitedGroup => group !== 'none');
  }
  if (lower !== '/api' && !lower.startsWith('/api/')) return [];
  if (unlimitedPaths.test(lower)) return [];
  const group = matchRoute(routes, req.method, path)?.route.meta.rateGroup ?? 'general';
  return group === 'none' ? [] : [group];
}

/** express-rate-limit logs a store error per request; while Redis is down one line a minute says it. */
function throttledErrorLog(logger: Logger): (...args: unknown[]) => void {
  // Called by express-rate-limit with (error, message), and by `hit` with the error.
  let lastAt = 0;
  return (...args: unknown[]) => {
    const now = Date.now();
    if (now - lastAt < 60_000) return;
    lastAt = now;
    const error = args.find((arg) => arg instanceof Error);
    logger.warn({ err: error }, 'rate-limit counters unavailable (Redis down?); requests pass unlimited meanwhile');
  };
}
