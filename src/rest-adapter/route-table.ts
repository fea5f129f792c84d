import type { AnyRouter } from '@trpc/server';
import type { OpenApiMethod } from 'trpc-to-openapi';
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

// The route table reads the procedures' `openapi` meta as trpc-to-openapi's document does, but
// without importing that package: its entry point loads its generator and adapters (openapi3-ts,
// yaml, h3, co-body: about 150 modules), which only the OpenAPI document needs, built on its
// first request (server.ts). A request needs the table at start-up; the package it did not.

/** `/api/x/` and `api/x` as `/api/x`. */
function normalizePath(path: string): string {
  return `/${path.replace(/^\/|\/$/g, '')}`;
}

/** `{name}` matches one path segment, captured as `name`; the path's letters match in any case. */
function pathPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{(.+?)\}/g, (_, name: string) => `(?<${name}>[^/]+)`)}$`, 'i');
}

/**
 * The REST routes, read from each procedure's `openapi` meta (a procedure whose meta says
 * `enabled: false` has none). Paths with fewer parameters are tried first, so
 * `/api/conversation/current` can never be swallowed by `/api/conversation/{id}` whatever order
 * the routers list them in.
 */
export function buildRouteTable(appRouter: AnyRouter, aliases: readonly RouteAlias[]): Route[] {
  const routes: Route[] = [];
  const metaByProcedure = new Map<string, ProcedureMeta>();
  const procedures = appRouter._def.procedures as Record<string, { _def: { meta?: ProcedureMeta } }>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta;
    const openapi = meta?.openapi;
    // trpc-to-openapi's meta may switch a route off; none of ours does, but the rule stays its.
    if (!meta || !openapi || (openapi as { enabled?: boolean }).enabled === false) continue;
    metaByProcedure.set(path, meta);
    routes.push(route(openapi.method, openapi.path, path, meta));
  }
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
    pattern: pathPattern(normalized),
    procedure,
    meta,
    paramCount: (normalized.match(/\{/g) ?? []).length,
  };
}

/** A path of letters, digits, `/`, `_` and `-` only: its pattern matches exactly that path, in any case. */
const plainPath = /^[\w/-]+$/;

/**
 * The table prepared for lookup: each parameterless route with a plain path by its method and
 * lower-case path (the first such route, where case variants repeat one) with the routes before
 * it that are not plain, and the routes whose pattern may match other paths, in table order.
 */
interface RouteIndex {
  plain: Map<string, { route: Route; before: readonly Route[] }>;
  others: readonly Route[];
}

const indexes = new WeakMap<readonly Route[], RouteIndex>();

function indexOf(routes: readonly Route[]): RouteIndex {
  let index = indexes.get(routes);
  if (!index) {
    const plain = new Map<string, { route: Route; before: readonly Route[] }>();
    const others: Route[] = [];
    for (const candidate of routes) {
      const key = `${candidate.method} ${candidate.path.toLowerCase()}`;
      if (candidate.paramCount !== 0 || !plainPath.test(candidate.path)) others.push(candidate);
      else if (!plain.has(key)) plain.set(key, { route: candidate, before: [...others] });
    }
    index = { plain, others };
    indexes.set(routes, index);
  }
  return index;
}

/**
 * The route for a method and raw (still percent-encoded) path; HEAD is served as GET. The first
 * route of the table that matches wins. This runs on every request: a plain static path is found
 * by one map lookup (its pattern confirmed, and no route before it matching) instead of a walk
 * through the table. A plain path's pattern matches only its own path in another case, so when
 * the lookup finds none, none of them can match and the walk skips them.
 */
export function matchRoute(routes: readonly Route[], method: string, rawPath: string): RouteMatch | null {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const path = normalizePath(rawPath);
  const { plain, others } = indexOf(routes);
  const known = plain.get(`${wanted} ${path.toLowerCase()}`);
  if (known === undefined) return firstMatch(others, wanted, path);
  if (known.route.pattern.test(path) && firstMatch(known.before, wanted, path) === null) return { route: known.route, params: {} };
  return firstMatch(routes, wanted, path);
}

function firstMatch(routes: readonly Route[], method: string, path: string): RouteMatch | null {
  for (const candidate of routes) {
    if (candidate.method !== method) continue;
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
