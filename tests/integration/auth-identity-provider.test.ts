import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { newSigningKey, startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import type { TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// The service and its identity provider over time: key rotation through the JWKS refetch, and a
// provider that is down, silent, or back again. Unreachable is 503 SERVICE_UNAVAILABLE, never a hang.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('key rotation', () => {
  let idp: TestIdentityProvider;
  let service: TestService;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    idp.define('rotating', { sub: 'rotating-user', roles: ['User'] });
    service = await startAuthService('sqlite', idp, { RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });
  const me = (token: string) => requestAs(service, token, 'GET', '/api/auth/me');

  it('a token signed with a newly published key is accepted after one JWKS refetch; one signed with a removed key is refused', async () => {
    const beforeRotation = await idp.tokenFor('rotating');
    expect((await me(beforeRotation)).status).toBe(200);
    await sleep(1100); // past the refetch cooldown that follows any fetch

    await idp.rotateKeys({ keepOld: false });
    const fetches = idp.jwksFetches();
    const afterRotation = await idp.tokenFor('rotating');
    const accepted = await me(afterRotation);
    expect(accepted.status).toBe(200);
    expect(accepted.body.userId).toBe('rotating-user');
    expect(idp.jwksFetches()).toBe(fetches + 1);

    const refused = await me(beforeRotation);
    expect(refused.status).toBe(401);
    expect(refused.body.error.details.reason).toBe('unknown_key');
  });

  it('with old and new keys both published, tokens of both verify', async () => {
    await sleep(1100);
    const old = idp.currentKey();
    await idp.rotateKeys({ keepOld: true });
    expect((await me(await idp.sign({ sub: 'by-new-key' }))).status).toBe(200);
    expect((await me(await idp.sign({ sub: 'by-old-key' }, { key: old }))).status).toBe(200);
  });

  it('a burst of unknown key ids causes at most one refetch, so forged kids cannot flood the provider', async () => {
    await sleep(1100);
    const stranger = await newSigningKey();
    const fetches = idp.jwksFetches();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, index) => idp.sign({ sub: `forger-${index}` }, { key: stranger, header: { kid: `made-up-${index}` } }).then(me)),
    );
    expect(replies.map((reply) => reply.status)).toEqual(Array(20).fill(401));
    expect(idp.jwksFetches() - fetches).toBeLessThanOrEqual(1);
  });
});

describe('an unreachable identity provider', () => {
  /** A well-formed RS256 token for an issuer, signed by a key nobody publishes: needs the JWKS to judge. */
  async function tokenFor(issuer: string): Promise<string> {
    const key = await newSigningKey();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ sub: 'someone', iss: issuer, aud: 'urn:assistant:api', exp: now + 300 })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(key.privateKey);
  }

  it('nothing listening: the service starts; a token that needs the keys gets 503 at once, a malformed one still 401', async () => {
    const issuer = await closedOrigin();
    await using service = await startAuthService('sqlite', { issuer, clientId: 'assistant', audience: 'urn:assistant:api' });
    expect((await service.request('GET', '/api/status')).status).toBe(200);
    const started = Date.now();
    const reply = await requestAs(service, await tokenFor(issuer), 'GET', '/api/auth/me');
    expect(reply.status).toBe(503);
    expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await requestAs(service, 'garbage', 'GET', '/api/auth/me')).status).toBe(401);
    expect((await service.request('GET', '/api/auth/me')).status).toBe(401);
  });

  it('a provider that accepts connections and never answers: 503 after OIDC_HTTP_TIMEOUT_MS, not a hang', async () => {
    const silent = await startSilentServer();
    try {
      const issuer = `http://127.0.0.1:${silent.port}`;
      await using service = await startAuthService(
        'sqlite',
        { issuer, clientId: 'assistant', audience: 'urn:assistant:api' },
        { OIDC_HTTP_TIMEOUT_MS: '300' },
      );
      const token = await tokenFor(issuer);
      // The first may share the start-up warm-up's attempt or its 1 s back-off; either way it ends.
      const first = await requestAs(service, token, 'GET', '/api/conversations');
      expect(first.status).toBe(503);
      await sleep(1100);
      // Past the back-off a request makes a fresh attempt, which gives up at the timeout.
      const started = Date.now();
      const reply = await requestAs(service, token, 'GET', '/api/conversations');
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      silent.close();
    }
  });

  it('down at start-up, then back: tokens are accepted once it answers; down again later, the cached keys verify new tokens', async () => {
    await using idp = await startIdentityProvider();
    idp.define('patient', { sub: 'patient-user', roles: ['User'] });
    const token = await idp.tokenFor('patient');
    await idp.pause();
    await using service = await startAuthService('sqlite', idp, { RATE_LIMIT_ENABLED: 'false' });
    expect((await requestAs(service, token, 'GET', '/api/auth/me')).status).toBe(503);

    await idp.resume();
    await waitFor(async () => ((await requestAs(service, token, 'GET', '/api/auth/me')).status === 200 ? true : undefined), 5000, 'the provider to be used again');

    await idp.pause();
    // A token the service has not seen, so it is verified with the cached keys, not remembered.
    const reply = await requestAs(service, await idp.sign({ sub: 'new-while-down' }), 'GET', '/api/auth/me');
    expect(reply.status).toBe(200);
    expect(reply.body.userId).toBe('new-while-down');
    await idp.resume();
  });
});

/** A TCP server that takes connections and never says a word. */
async function startSilentServer(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}
