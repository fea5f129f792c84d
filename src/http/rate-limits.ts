import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { rateLimit, type Options } from 'express-rate-limit';
import type { Config } from '../core/config/load-config.js';
import { AppError } from '../core/errors/app-error.js';
import type { Logger } from '../core/logger.js';
import type { RedisConnection } from '../core/redis/redis-connection.js';
import type { RateGroup } from '../procedures/meta.js';
import { matchRoute, type Route } from '../rest-adapter/route-table.js';
import { sendError } from './error-response.js';
import { RedisRateLimitStore } from './redis-rate-limit-store.js';

type LimitedGroup = Exclude<RateGroup, 'none'>;

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

/**
 * Per-IP, per-group request limits (CONTRACT §9), checked before authentication (§2). The group
 * is the procedure's declared `rateGroup`: for REST the matched route's, for /trpc each called
 * procedure's (a batch counts once in every group it touches); any other /api path, unknown ones
 * included, counts in the general group. Counters live in Redis when it is configured, so the
 * instances share them; while Redis is down requests pass unlimited rather than all refused.
 */
export function rateLimiting(
  config: Config,
  logger: Logger,
  routes: readonly Route[],
  procedureGroups: ReadonlyMap<string, RateGroup>,
  redis: RedisConnection | undefined,
): RequestHandler {
  const storeErrors = throttledErrorLog(logger);
  const limiters = new Map<LimitedGroup, RequestHandler>();
  for (const group of ['chat', 'models', 'terminal', 'workspace', 'general'] as const) {
    const limit = limitOf(group, config);
    const options: Partial<Options> = {
      windowMs,
      limit,
      legacyHeaders: true,
      standardHeaders: false,
      passOnStoreError: true,
      logger: { warn: storeErrors, error: storeErrors },
      // TRUST_PROXY is the operator's decision (CONTRACT §1); Express has applied it to req.ip.
      validate: { trustProxy: false, xForwardedForHeader: false },
      handler: (_req, res) => {
        const retryAfter = Number(res.getHeader('Retry-After') ?? 60);
        sendError(
          res,
          new AppError('RATE_LIMIT_EXCEEDED', `Too many ${group} requests: at most ${limit} a minute; retry in ${retryAfter} s`, {
            details: { group, limit, retryAfter },
          }),
        );
      },
      ...(redis ? { store: new RedisRateLimitStore(redis.client, `${redis.keyPrefix}rate:${group}:`) } : {}),
    };
    limiters.set(group, rateLimit(options));
  }

  return function limitRequests(req: Request, res: Response, next: NextFunction): void {
    const groups = groupsOf(req, routes, procedureGroups);
    const chain = groups.flatMap((group) => limiters.get(group) ?? []);
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

function groupsOf(req: Request, routes: readonly Route[], procedureGroups: ReadonlyMap<string, RateGroup>): LimitedGroup[] {
  const path = req.path;
  if (path.startsWith('/trpc/')) {
    const called = path.slice('/trpc/'.length).split(',');
    const groups = new Set(called.map((procedure) => procedureGroups.get(procedure) ?? 'general'));
    return [...groups].filter((group): group is LimitedGroup => group !== 'none');
  }
  if (path !== '/api' && !path.startsWith('/api/')) return [];
  if (unlimitedPaths.test(path)) return [];
  const group = matchRoute(routes, req.method, path)?.route.meta.rateGroup ?? 'general';
  return group === 'none' ? [] : [group];
}

/** express-rate-limit logs a store error per request; while Redis is down one line a minute says it. */
function throttledErrorLog(logger: Logger): (...args: unknown[]) => void {
  let lastAt = 0;
  return (...args: unknown[]) => {
    const now = Date.now();
    if (now - lastAt < 60_000) return;
    lastAt = now;
    const error = args.find((arg) => arg instanceof Error);
    logger.warn({ err: error }, 'rate-limit counters unavailable (Redis down?); requests pass unlimited meanwhile');
  };
}
