import type { NextFunction, Request, Response } from 'express';
import { AppError } from '../core/errors/app-error.js';
import type { RateLimits } from '../core/rate-limits/rate-limits.js';
import { matchRoute, type Route, type RouteMatch } from '../rest-adapter/route-table.js';
import { errorFormatOf, sendRefusal, type ErrorFormat } from './transport-refusal.js';

/** What an HTTP request is, decided once, before anything else reads it. */
export type ResolvedRequest =
  /** A REST route of a procedure; `url` is the request's URL. */
  | { transport: 'rest'; match: RouteMatch; url: URL }
  /** A /trpc call of known procedures, with the method their type takes. */
  | { transport: 'trpc'; procedures: readonly string[] }
  /**
   * A path under /api, /trpc or /v1 that reaches no procedure. With `refuse` it is answered 404
   * here, in its transport's format, and no router sees it: a spelling the routers would read
   * differently (dot segments, an absolute-form target), a /trpc call tRPC would not run, an
   * unknown /v1 path.
   */
  | { transport: 'unmatched'; format: ErrorFormat; refuse: boolean }
  /** Anything else: /v1's own routes, the documentation, sign-in, the web interface's files. */
  | { transport: 'other' };

declare module 'express-serve-static-core' {
  interface Locals {
    resolved?: ResolvedRequest;
  }
}

/** Each procedure's type, which decides the method /trpc takes for it. */
export type ProcedureTypes = ReadonlyMap<string, 'query' | 'mutation' | 'subscription'>;

/** CONTRACT §9: documentation is neither limited nor given the headers (health is a procedure in no group). */
const unlimitedPaths = /^\/api\/(status|openapi\.json|docs)(\/|$)/i;
/** The /v1 routes the OpenAI-compatible bridge serves. */
const openAIRoutes = new Set(['POST /v1/chat/completions', 'GET /v1/models', 'HEAD /v1/models']);

/** The request's URL, built on a fixed origin so a path starting `//` stays a path instead of a host. */
export function requestUrl(req: Request): URL {
  const raw = req.originalUrl.startsWith('/') ? req.originalUrl : `/${req.originalUrl}`;
  return new URL(`http://localhost${raw}`);
}

/**
 * Resolves each request to the procedure it calls, once: the REST bridge, the request timing and
 * the count of unmatched requests read `res.locals.resolved` instead of matching again, so no two
 * of them can read a path differently.
 */
export function resolveRequests(routes: readonly Route[], procedures: ProcedureTypes) {
  return function resolveRequest(req: Request, res: Response, next: NextFunction): void {
    res.locals.resolved = resolve(req, routes, procedures);
    next();
  };
}

/**
 * Rate limits are counted in the procedure chain (countRequest); requests that reach no procedure
 * (an unknown /api path or /trpc name, which scanners send) are counted here, in the general
 * group, so they are limited and carry the headers too; then those no router may see are answered
 * 404. Placed where the contract puts the limit: after the Host and Origin checks.
 */
export function handleUnmatched(limits: RateLimits | null) {
  return function handleUnmatchedRequest(req: Request, res: Response, next: NextFunction): void {
    const resolved = res.locals.resolved;
    if (resolved?.transport !== 'unmatched') {
      next();
      return;
    }
    const go = (headers: Record<string, string>) => {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      if (resolved.refuse) sendRefusal(req, res, new AppError('NOT_FOUND', 'Not found'), resolved.format);
      else next();
    };
    if (!limits) {
      go({});
      return;
    }
    limits.count('general', req.ip ?? '').then(({ headers, refusal }) => {
      if (refusal) sendRefusal(req, res, refusal, resolved.format);
      else go(headers);
    }, next);
  };
}

function resolve(req: Request, routes: readonly Route[], procedures: ProcedureTypes): ResolvedRequest {
  const raw = req.originalUrl;
  const query = raw.indexOf('?');
  const rawPath = query === -1 ? raw : raw.slice(0, query);
  let url: URL;
  try {
    url = requestUrl(req);
  } catch {
    return { transport: 'other' };
  }
  const lower = url.pathname.toLowerCase();
  const format = errorFormatOf(lower);
  const api = ['/api', '/trpc', '/v1'].some((prefix) => lower === prefix || lower.startsWith(`${prefix}/`));
  if (!canonical(rawPath)) {
    // Express would route the raw spelling, URL parsing reads another path: neither may decide.
    const routedPath = req.path.toLowerCase();
    const routedApi = ['/api', '/trpc', '/v1'].some((prefix) => routedPath === prefix || routedPath.startsWith(`${prefix}/`));
    return api || routedApi ? { transport: 'unmatched', format: errorFormatOf(routedApi ? routedPath : lower), refuse: true } : { transport: 'other' };
  }
  if (format === 'trpc') {
    const names = trpcProcedures(req, url, procedures);
    return names ? { transport: 'trpc', procedures: names } : { transport: 'unmatched', format, refuse: true };
  }
  if (format === 'openai') {
    return openAIRoutes.has(`${req.method} ${lower.replace(/\/$/, '')}`) ? { transport: 'other' } : { transport: 'unmatched', format, refuse: true };
  }
  if (!api) return { transport: 'other' };
  const match = matchRoute(routes, req.method, url.pathname);
  if (match) return { transport: 'rest', match, url };
  // The documentation's own Express routes.
  return unlimitedPaths.test(lower) ? { transport: 'other' } : { transport: 'unmatched', format, refuse: false };
}

/**
 * A path every layer reads alike: origin-form (starting `/`), with no `.` or `..` segment, plain
 * or percent-encoded. Such segments are resolved by URL parsing but not by Express's router.
 */
function canonical(rawPath: string): boolean {
  if (!rawPath.startsWith('/')) return false;
  // Most paths hold no dot at all, plain or encoded: nothing to split (this runs on every request).
  if (!rawPath.includes('.') && !/%2e/i.test(rawPath)) return true;
  return rawPath.split('/').every((segment) => {
    const plain = segment.replace(/%2e/gi, '.');
    return plain !== '.' && plain !== '..';
  });
}

/**
 * The procedures of a /trpc call as tRPC will read them: the last path segment, percent-decoded,
 * split on commas only for a batch (`?batch=1`); each must exist and take the request's method
 * (GET for queries and subscriptions, POST for mutations). Null when tRPC would run none.
 */
function trpcProcedures(req: Request, url: URL, procedures: ProcedureTypes): string[] | null {
  let segment: string;
  try {
    segment = decodeURIComponent(url.pathname.slice(url.pathname.lastIndexOf('/') + 1));
  } catch {
    return null;
  }
  const names = url.searchParams.get('batch') === '1' ? segment.split(',') : [segment];
  const wanted = req.method === 'POST' ? ['mutation'] : req.method === 'GET' ? ['query', 'subscription'] : [];
  return names.every((name) => wanted.includes(procedures.get(name) ?? '')) ? names : null;
}
