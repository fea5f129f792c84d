import { describe, expect, it } from 'vitest';
import { legacyAliases } from '../../src/rest-adapter/legacy-aliases.js';
import { buildRouteTable, matchRoute, type Route, type RouteMatch } from '../../src/rest-adapter/route-table.js';
import { appRouter } from '../../src/routers/app-router.js';

const routes = buildRouteTable(appRouter, legacyAliases);

/** The rule the lookup must keep: the first route of the table whose pattern matches. */
function firstInTable(table: readonly Route[], method: string, rawPath: string): RouteMatch | null {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const path = `/${rawPath.replace(/^\/|\/$/g, '')}`;
  for (const route of table) {
    if (route.method !== wanted) continue;
    const match = route.pattern.exec(path);
    if (!match) continue;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(match.groups ?? {})) {
      try {
        params[name] = decodeURIComponent(value);
      } catch {
        return null;
      }
    }
    return { route, params };
  }
  return null;
}

const spellings = (path: string) => [path, path.toUpperCase(), `${path}/`, path.replace(/\{[^}]+\}/g, 'abc'), path.replace(/\{[^}]+\}/g, 'a%20b'), `${path}x`, `/x${path}`];

describe('REST route lookup', () => {
  it('finds for every route, spelling and method what a walk through the table finds', () => {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const paths = [...routes.flatMap((route) => spellings(route.path)), '/api/conversation/current', '/api/unknown', '/', '/api', '/api/K\u212Aelvin'];
    for (const path of paths) {
      for (const method of methods) expect(matchRoute(routes, method, path), `${method} ${path}`).toEqual(firstInTable(routes, method, path));
    }
  });

  it('lets a route whose pattern is not a plain path win when it comes first in the table', () => {
    const make = (path: string, procedure: string): Route => ({
      method: 'GET',
      path,
      pattern: new RegExp(`^${path}$`, 'i'),
      procedure,
      meta: {},
      paramCount: 0,
    });
    const table = [make('/api/a.b', 'dotted'), make('/api/a-b', 'plain'), make('/api/A-B', 'variant')];
    expect(matchRoute(table, 'GET', '/api/a-b')?.route.procedure).toBe('dotted');
    expect(matchRoute(table, 'GET', '/api/A-b')?.route.procedure).toBe('dotted');
    const plainFirst = [table[1], table[0], table[2]] as Route[];
    expect(matchRoute(plainFirst, 'GET', '/api/a-B')?.route.procedure).toBe('plain');
    expect(matchRoute(plainFirst, 'GET', '/api/a_b')?.route.procedure).toBe('dotted');
    // U+212A (Kelvin sign) lowercases to k, which a case-insensitive pattern without /u does not match.
    expect(matchRoute([make('/api/k', 'k')], 'GET', '/api/\u212A')).toBeNull();
  });

  it('tries one pattern for a plain static path, not those of every route before it', () => {
    let tried = 0;
    class Counted extends RegExp {
      override exec(text: string) {
        tried += 1;
        return super.exec(text);
      }
    }
    const counted = routes.map((route) => ({ ...route, pattern: new Counted(route.pattern.source, route.pattern.flags) }));
    expect(matchRoute(counted, 'POST', '/api/unified/stream')?.route.procedure).toBe('chat.unifiedStream');
    expect(tried).toBe(1);
  });
});
