import { forEachOpenApiProcedure, getPathRegExp, normalizePath, type OpenApiMethod } from 'trpc-to-openapi';
import type { AnyRouter } from '@trpc/server';
import type { ProcedureMeta } from '../procedures/meta.js';
import type { RouteAlias } from './legacy-aliases.js';

export interface Route {
  method: OpenApiMethod;
  path: string;
  pattern: RegExp;
  /** Dotted path of the procedure in the app router. */
  procedure: string;
  meta: ProcedureMeta;
  paramCount: number;
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/**
 * The REST routes, read from each procedure's `openapi` meta with trpc-to-openapi's own helpers.
 * Paths with fewer parameters are tried first, so `/api/conversation/current` can never be
 * swallowed by `/api/conversation/{id}` whatever order the routers list them in.
 */
export function buildRouteTable(appRouter: AnyRouter, aliases: readonly RouteAlias[]): Route[] {
  const routes: Route[] = [];
  const metaByProcedure = new Map<string, ProcedureMeta>();
  forEachOpenApiProcedure<ProcedureMeta>(appRouter._def.procedures as never, ({ path, meta }) => {
    metaByProcedure.set(path, meta);
    routes.push(route(meta.openapi.method, meta.openapi.path, path, meta));
  });
  for (const alias of aliases) {
    const meta = metaByProcedure.get(alias.procedure);
    if (!meta) throw new Error(`Alias ${alias.method} ${alias.path} names unknown procedure ${alias.procedure}`);
    routes.push(route(alias.method, alias.path, alias.procedure, meta));
  }
  return routes.sort((a, b) => a.paramCount - b.paramCount);
}

function route(method: OpenApiMethod, path: string, procedure: string, meta: ProcedureMeta): Route {
  const normalized = normalizePath(path);
  return {
    method,
    path: normalized,
    pattern: getPathRegExp(normalized),
    procedure,
    meta,
    paramCount: (normalized.match(/\{/g) ?? []).length,
  };
}

/** The route for a method and raw (still percent-encoded) path; HEAD is served as GET. */
export function matchRoute(routes: readonly Route[], method: string, rawPath: string): RouteMatch | null {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const path = normalizePath(rawPath);
  for (const candidate of routes) {
    if (candidate.method !== wanted) continue;
    const match = candidate.pattern.exec(path);
    if (!match) continue;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(match.groups ?? {})) {
      const decoded = safeDecode(value);
      if (decoded === null) return null;
      params[name] = decoded;
    }
    return { route: candidate, params };
  }
  return null;
}

function safeDecode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}
