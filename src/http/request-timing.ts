import type { NextFunction, Request, Response } from 'express';
import { UNMATCHED_ROUTE, type ServiceMetrics } from '../core/metrics/service-metrics.js';
import { matchRoute, type Route } from '../rest-adapter/route-table.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The REST route template the request matched (`/api/conversation/{id}`), for the metrics. */
    routeTemplate?: string;
  }
}

/** Answered by something without a route of its own (static files, CORS preflights). */
const OTHER_ROUTE = 'other';
const TRPC_BATCH_ROUTE = '/trpc/{batch}';

/**
 * Counts and times every HTTP request by route template and status. The label is worked out once
 * the reply has ended, so the request itself waits for nothing; `close` rather than `finish`
 * so a stream whose client left is counted too.
 */
export function requestTiming(metrics: ServiceMetrics, routes: readonly Route[], procedureNames: Iterable<string>) {
  const labelOf = routeLabeler(routes, procedureNames);
  return function timeRequest(req: Request, res: Response, next: NextFunction): void {
    const started = performance.now();
    res.once('close', () => {
      metrics.requestAnswered(req.method, labelOf(req, res), res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
}

/**
 * The `route` label of an answered request: never the raw URL, so ids in paths and scanners'
 * guesses cannot create series without end. The REST bridge names the template it matched; an
 * Express route names its own path; /trpc calls are named by procedure; an unknown path is
 * UNMATCHED_ROUTE.
 */
function routeLabeler(routes: readonly Route[], procedureNames: Iterable<string>) {
  // Built once, so labelling a /trpc call builds no string.
  const trpcLabels = new Map([...procedureNames].map((name) => [name, `/trpc/${name}`]));

  function trpcLabel(path: string): string {
    const names = path.slice('/trpc/'.length);
    const single = trpcLabels.get(names);
    if (single !== undefined) return single;
    let decoded: string[];
    try {
      decoded = decodeURIComponent(names).split(',');
    } catch {
      return UNMATCHED_ROUTE;
    }
    if (decoded.length === 1) return trpcLabels.get(decoded[0] ?? '') ?? UNMATCHED_ROUTE;
    // A batch's combinations are too many to name each; its procedures must all exist.
    return decoded.every((name) => trpcLabels.has(name)) ? TRPC_BATCH_ROUTE : UNMATCHED_ROUTE;
  }

  return function routeLabel(req: Request, res: Response): string {
    const template = res.locals.routeTemplate;
    if (template !== undefined) return template;
    // originalUrl, because mounted routers (/trpc) trim req.url for their own use.
    const url = req.originalUrl;
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const lower = path.toLowerCase();
    if (lower.startsWith('/trpc/') && !path.includes('/', '/trpc/'.length)) return trpcLabel(path);
    // An Express route names its own path; one declared for several paths names them all.
    const route = req.route as { path?: unknown } | undefined;
    if (typeof route?.path === 'string') return req.baseUrl + route.path;
    if (Array.isArray(route?.path)) return route.path.map((path) => req.baseUrl + String(path)).join('|');
    // Refused before the REST bridge ran (a 429 of the rate limit): its template all the same.
    if (lower === '/api' || lower.startsWith('/api/')) {
      const match = matchRoute(routes, req.method, path);
      if (match) return match.route.path;
    }
    return res.statusCode === 404 ? UNMATCHED_ROUTE : OTHER_ROUTE;
  };
}
