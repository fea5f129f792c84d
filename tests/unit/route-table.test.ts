import { describe, expect, it } from 'vitest';
import { legacyAliases } from '../../src/rest-adapter/legacy-aliases.js';
import { buildRouteTable, matchRoute } from '../../src/rest-adapter/route-table.js';
import { appRouter } from '../../src/routers/app-router.js';

const routes = buildRouteTable(appRouter, legacyAliases);

describe('REST route table', () => {
  it('matches a static path before a parameterised one', () => {
    expect(matchRoute(routes, 'GET', '/api/conversation/current')?.route.procedure).toBe('conversations.current');
    expect(matchRoute(routes, 'GET', '/api/conversation/abc')).toMatchObject({ route: { procedure: 'conversations.get' }, params: { id: 'abc' } });
  });

  it('serves HEAD as GET, tolerates a trailing slash, and decodes parameters', () => {
    expect(matchRoute(routes, 'HEAD', '/api/status')?.route.procedure).toBe('system.status');
    expect(matchRoute(routes, 'GET', '/api/status/')?.route.procedure).toBe('system.status');
    expect(matchRoute(routes, 'DELETE', '/api/prompt-orders/a%20b')?.params).toEqual({ orderId: 'a b' });
  });

  it('answers nothing for a wrong method, an unknown path, a slash inside a parameter or bad encoding', () => {
    expect(matchRoute(routes, 'PUT', '/api/status')).toBeNull();
    expect(matchRoute(routes, 'GET', '/api/unknown')).toBeNull();
    expect(matchRoute(routes, 'GET', '/api/conversation/a/b')).toBeNull();
    expect(matchRoute(routes, 'GET', '/api/conversation/%E0%A4%A')).toBeNull();
  });

  it('routes the legacy aliases to the same procedures', () => {
    expect(matchRoute(routes, 'POST', '/api/conversations/save')?.route.procedure).toBe('conversations.save');
    expect(matchRoute(routes, 'DELETE', '/api/conversations/x')?.route.procedure).toBe('conversations.delete');
  });

  it('leaves the documentation paths to their own Express routes', () => {
    // server.ts hands REST matches to the bridge before the documentation's routers.
    for (const path of ['/api/openapi.json', '/api/docs', '/api/docs/', '/api/docs/assets/swagger-ui.css']) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) expect(matchRoute(routes, method, path)).toBeNull();
    }
  });

  it('has no two routes for the same method and path', () => {
    const keys = routes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
