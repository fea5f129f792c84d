import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { EventSource } from 'eventsource';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../../src/index.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { rawRequest } from '../helpers/raw-request.js';
import type { TestService } from '../helpers/test-service.js';
import { connect, wsUrl } from '../helpers/ws-client.js';

// Issue 20, item 5: the same token rules on every transport. Before, `GET /trpc/events.follow`
// kept delivering after its token expired, a `connectionParams` token in the URL authenticated
// any query or mutation, and a token whose `sub` was `local` became the built-in user.

function clientFor(url: string, token: string) {
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({ url: `${url}/trpc`, transformer: superjson, EventSource, connectionParams: { token } }),
        false: httpLink({ url: `${url}/trpc`, transformer: superjson, headers: { authorization: `Bearer ${token}` } }),
      }),
    ],
  });
}

describe('token rules on every transport', () => {
  let idp: TestIdentityProvider;
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    fake = await startFakeOllama();
    service = await startAuthService('sqlite', idp, { OLLAMA_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
    await idp[Symbol.asyncDispose]();
  });

  it("a token naming a reserved subject (local, anonymous) is refused with 401 on REST, /trpc, /v1 and upgrades", async () => {
    // What `local` owns while auth was off, or the audit's `anonymous`, must stay out of reach.
    for (const sub of ['local', 'anonymous']) {
      const token = await idp.sign({ sub, realm_access: { roles: ['TheDude'] } });
      const me = await requestAs(service, token, 'GET', '/api/auth/me');
      expect(me.status, sub).toBe(401);
      expect(me.body.error.details.reason).toBe('reserved_subject');
      expect((await requestAs(service, token, 'GET', '/api/conversations')).status).toBe(401);
      expect((await requestAs(service, token, 'GET', '/trpc/system.me')).status).toBe(401);
      expect((await requestAs(service, token, 'GET', '/v1/models')).status).toBe(401);
      const upgrade = await connect(`${wsUrl(service.url, '/ws')}?access_token=${encodeURIComponent(token)}`);
      expect(upgrade.ok).toBe(false);
      if (!upgrade.ok) expect(upgrade.status).toBe(401);
    }
    // A subject that merely resembles one is an ordinary user.
    const near = await requestAs(service, await idp.sign({ sub: 'Local', realm_access: { roles: ['User'] } }), 'GET', '/api/auth/me');
    expect(near.body.userId).toBe('Local');
  });

  it('a token in the URL (tRPC connection parameters) opens subscriptions only, never a query or a mutation', async () => {
    const token = await idp.sign({ sub: 'url-token-user', realm_access: { roles: ['Dev'] } });
    const params = `connectionParams=${encodeURIComponent(JSON.stringify({ token }))}`;
    const query = await rawRequest(service.url, 'GET', `/trpc/system.me?${params}`);
    expect(query.status).toBe(401);
    const mutation = await rawRequest(service.url, 'POST', `/trpc/conversations.save?${params}`, {
      headers: { 'content-type': 'application/json' },
      body: '{"json":{"title":"through the url"}}',
    });
    expect(mutation.status).toBe(401);
    const list = await requestAs(service, token, 'GET', '/api/conversations');
    expect(list.body.total).toBe(0);
    // `access_token` in the query is for SSE GETs and upgrades only.
    expect((await rawRequest(service.url, 'GET', `/api/conversations?access_token=${encodeURIComponent(token)}`)).status).toBe(401);

    // The subscription itself takes it.
    const client = clientFor(service.url, token);
    const received = new Promise<unknown>((resolve, reject) => {
      const subscription = client.events.follow.subscribe(
        {},
        {
          onStarted: () => {
            void client.conversations.save.mutate({ title: 'heard' });
          },
          onData: ({ data }) => {
            subscription.unsubscribe();
            resolve(data);
          },
          onError: reject,
        },
      );
    });
    await expect(received).resolves.toMatchObject({ kind: 'conversation', action: 'saved' });
  });

  it('a /trpc subscription ends with 401 when its token expires, as a socket closes with 4401', async () => {
    const expiresInS = 3;
    const token = await idp.sign({ sub: 'expiring-subscriber', realm_access: { roles: ['Dev'] }, exp: Math.floor(Date.now() / 1000) + expiresInS });
    const client = clientFor(service.url, token);
    const opened = Date.now();
    const ended = await new Promise<{ code: unknown; afterMs: number }>((resolve) => {
      const subscription = client.events.follow.subscribe(
        {},
        {
          onError: (error) => {
            subscription.unsubscribe();
            resolve({ code: (error.data as { appCode?: unknown } | undefined)?.appCode, afterMs: Date.now() - opened });
          },
        },
      );
    });
    expect(ended.code).toBe('UNAUTHORIZED');
    expect(ended.afterMs).toBeGreaterThan(1000);
  });

  it('a REST SSE reply ends when its token expires; the generation goes on and resumes with a fresh token', async () => {
    const sub = 'expiring-reader';
    const token = await idp.sign({ sub, realm_access: { roles: ['Dev'] }, exp: Math.floor(Date.now() / 1000) + 3 });
    fake.enqueue({ kind: 'text', chunks: Array.from({ length: 12 }, (_, index) => `part${index} `), chunkDelayMs: 500 });
    const opened = Date.now();
    const reply = await fetch(`${service.url}/api/message/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'tell a slow story' }),
    });
    expect(reply.status).toBe(200);
    const streamId = reply.headers.get('x-stream-id');
    let text = '';
    try {
      for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8');
    } catch {
      // Cut at expiry: the reader sees the connection end.
    }
    const afterMs = Date.now() - opened;
    expect(text).toContain('part0');
    expect(text).not.toContain('"type":"done"');
    expect(afterMs).toBeLessThan(5500);

    const fresh = await idp.sign({ sub, realm_access: { roles: ['Dev'] } });
    const resumed = await fetch(`${service.url}/api/streams/${streamId}?after=0`, { headers: { authorization: `Bearer ${fresh}` } });
    expect(resumed.status).toBe(200);
    const whole = await resumed.text();
    expect(whole).toContain('part11');
    expect(whole).toContain('"type":"done"');
  });
});
