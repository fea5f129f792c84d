import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsRole, permissionsOf, roles, type Role } from '../../src/core/auth/permissions.js';
import { legacyAliases } from '../../src/rest-adapter/legacy-aliases.js';
import { buildRouteTable, type Route } from '../../src/rest-adapter/route-table.js';
import { appRouter } from '../../src/routers/app-router.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { expectedGuards } from '../helpers/contract-guards.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import type { TestResponse, TestService } from '../helpers/test-service.js';

// Every REST endpoint, called through HTTP with a real token for each role (and one holding no
// role), against CONTRACT §5's table as written out in contract-guards.ts. The bodies are empty, so
// a caller who passes the guard meets validation (400), the feature flag (403 SECURITY_VIOLATION,
// system commands are off here) or the operation itself; one who does not gets 403 FORBIDDEN
// first. Without a token only the public paths answer.

const routes = buildRouteTable(appRouter, legacyAliases);
const sampleParams: Record<string, string> = { name: 'no-such-model' };
const somePath = (route: Route) => route.path.replace(/\{(\w+)\}/g, (_match, name: string) => sampleParams[name] ?? '7d3c9a4e-5b21-4f6e-8a0d-1c2b3e4f5a6b');
const label = (route: Route) => `${route.method} ${route.path}`;

type Holder = Role | 'no role';
const holders: Holder[] = [...roles, 'no role'];

/** Whether the contract lets a token with `held` roles past the guard of `procedure`. */
function allowed(procedure: string, held: Role[]): boolean {
  const expected = expectedGuards[procedure];
  if (!expected) throw new Error(`${procedure} is missing from contract-guards.ts`);
  const { guard } = expected;
  if (guard.kind !== 'permission') return true;
  const granted = new Set(permissionsOf(held));
  return guard.permissions.every((name) => granted.has(name)) && (!guard.anyRole || guard.anyRole.some((role) => holdsRole(held, role)));
}

describe('the role matrix through HTTP', () => {
  let idp: TestIdentityProvider;
  let service: TestService;
  const tokens = new Map<Holder, string>();

  beforeAll(async () => {
    idp = await startIdentityProvider();
    const nowhere = await closedOrigin();
    service = await startAuthService('sqlite', idp, {
      RATE_LIMIT_ENABLED: 'false',
      OLLAMA_BASE_URL: nowhere,
      OPENAI_BASE_URL: nowhere,
      ANTHROPIC_BASE_URL: nowhere,
      PROVIDER_TIMEOUT_MS: '1000',
    });
    for (const holder of holders) {
      const name = holder.replace(' ', '-');
      idp.define(name, { sub: `matrix-${name}`, roles: holder === 'no role' ? [] : [holder] });
      tokens.set(holder, await idp.tokenFor(name));
    }
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  const call = (route: Route, token: string | null): Promise<TestResponse> =>
    requestAs(service, token, route.method, somePath(route), route.method === 'GET' ? {} : { json: {} });

  it.each(holders)('a %s token: each endpoint allows or refuses exactly as the contract says', async (holder) => {
    const held = holder === 'no role' ? [] : [holder];
    const token = tokens.get(holder) ?? null;
    const outcomes: string[] = [];
    const wanted: string[] = [];
    for (const route of routes) {
      const reply = await call(route, token);
      const code = reply.body?.error?.code as string | undefined;
      expect(reply.status, label(route)).not.toBe(401);
      // Past the guard an operation may meet the unreachable model providers (503), nothing worse.
      if (reply.status >= 500) expect(code, `${label(route)}: ${reply.text}`).toBe('MODEL_UNAVAILABLE');
      outcomes.push(`${label(route)} → ${code === 'FORBIDDEN' ? 'forbidden' : 'allowed'}`);
      wanted.push(`${label(route)} → ${allowed(route.procedure, held) ? 'allowed' : 'forbidden'}`);
      const feature = expectedGuards[route.procedure]?.feature;
      if (feature && allowed(route.procedure, held)) expect(code, label(route)).toBe('SECURITY_VIOLATION');
    }
    expect(outcomes).toEqual(wanted);
  });

  it('agent mode needs terminal:execute besides chat:send: a User is refused before any provider is called', async () => {
    const body = { json: { message: 'list the files', mode: 'agent' } };
    const asUser = await requestAs(service, tokens.get('User') ?? null, 'POST', '/api/message', body);
    expect(asUser.status).toBe(403);
    expect(asUser.body.error).toMatchObject({ code: 'FORBIDDEN', details: { missing: 'terminal:execute' } });
    const asDev = await requestAs(service, tokens.get('Dev') ?? null, 'POST', '/api/message', body);
    expect(asDev.body.error?.code).not.toBe('FORBIDDEN');
  });

  it('without a token only the public paths answer; everything else is 401 before validation or existence', async () => {
    for (const route of routes) {
      const reply = await call(route, null);
      if (expectedGuards[route.procedure]?.guard.kind === 'public') {
        expect(reply.status, label(route)).toBe(200);
        continue;
      }
      expect(reply.status, label(route)).toBe(401);
      expect(reply.headers.get('www-authenticate'), label(route)).toBe('Bearer');
    }
    for (const path of ['/api/openapi.json', '/api/docs']) expect((await service.request('GET', path)).status, path).toBe(200);
    // Unknown paths and wrong methods are decided before authentication (CONTRACT §2).
    expect((await service.request('GET', '/api/no-such-thing')).status).toBe(404);
    expect((await service.request('PATCH', '/api/conversations')).status).toBe(404);
  });
});
