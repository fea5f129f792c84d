import type { NextFunction, Request, Response } from 'express';
import { UNMATCHED_ROUTE, type ServiceMetrics } from '../core/metrics/service-metrics.js';

/** Answered by something without a route of its own (static files, CORS preflights). */
const OTHER_ROUTE = 'other';
const TRPC_BATCH_ROUTE = '/trpc/{batch}';

/**
 * Counts and times every HTTP request by route template and status. The label is worked out once
 * the reply has ended, so the request itself waits for nothing; `close` rather than `finish`
 * so a stream whose client left is counted too.
 */
export function requestTiming(metrics: ServiceMetrics, procedureNames: Iterable<string>) {
  const labelOf = routeLabeler(procedureNames);
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
 * guesses cannot create series without end. It is read from what the request resolved to
 * (resolve-request.ts): a REST route's template, /trpc procedures by name; an Express route names
 * its own path; an unknown path is UNMATCHED_ROUTE.
 */
function routeLabeler(procedureNames: Iterable<string>) {
  // Built once, so labelling a /trpc call builds no string.
  const trpcLabels = new Map([...procedureNames].map((name) => [name, `/trpc/${name}`]));

  return function routeLabel(req: Request, res: Response): string {
    const resolved = res.locals.resolved;
    if (resolved?.transport === 'rest') return resolved.match.route.path;
    if (resolved?.transport === 'unmatched') return UNMATCHED_ROUTE;
    if (resolved?.transport === 'trpc') {
      const names = resolved.procedures;
      // A batch's combinations are too many to name each.
      return names.length === 1 ? (trpcLabels.get(names[0] ?? '') ?? UNMATCHED_ROUTE) : TRPC_BATCH_ROUTE;
    }
    // An Express route names its own path; one declared for several paths names them all.
    const route = req.route as { path?: unknown } | undefined;
    if (typeof route?.path === 'string') return req.baseUrl + route.path;
    if (Array.isArray(route?.path)) return route.path.map((path) => req.baseUrl + String(path)).join('|');
    return res.statusCode === 404 ? UNMATCHED_ROUTE : OTHER_ROUTE;
  };
}
