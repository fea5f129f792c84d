import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import type { TestService } from '../helpers/test-service.js';
import { connect, isDoneOf, open, wsUrl } from '../helpers/ws-client.js';

// Authentication of WebSocket upgrades (CONTRACT §5, §8) against a real OpenID provider: the same
// verifier as HTTP, the token from the header or the query, 401 for a bad one, close 4401 at
// expiry unless renewed over the socket, and the socket's chats owned by the token's subject.

const now = () => Math.floor(Date.now() / 1000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('WebSocket authentication', () => {
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
    await idp[Symbol.asyncDispose]();
    await fake.close();
  });

  const user = (sub: string, claims: Record<string, unknown> = {}) => idp.sign({ sub, realm_access: { roles: ['User'] }, ...claims });

  it('an upgrade without a valid token is refused with 401 in the envelope and a Bearer challenge', async () => {
    const missing = await connect(wsUrl(service.url, '/ws'));
    expect(missing).toMatchObject({ ok: false, status: 401, body: { error: { code: 'UNAUTHORIZED', details: { reason: 'missing' } } } });
    expect(missing.ok ? undefined : missing.headers['www-authenticate']).toBe('Bearer');
    const expired = await connect(wsUrl(service.url, `/ws?access_token=${await user('late', { exp: now() - 120 })}`));
    expect(expired).toMatchObject({ ok: false, status: 401, body: { error: { details: { reason: 'expired' } } } });
    const forged = await connect(wsUrl(service.url, '/ws/markdown-stream'), { headers: { authorization: 'Bearer a.b.c' } });
    expect(forged).toMatchObject({ ok: false, status: 401 });
  });

  it('a token in the header or the query opens the socket; its chats belong to the token subject', async () => {
    const alice = await user('ws-alice');
    const viaHeader = await open(wsUrl(service.url, '/ws'), { headers: { authorization: `Bearer ${alice}` } });
    viaHeader.close();
    const client = await open(wsUrl(service.url, `/ws?access_token=${alice}`));
    fake.enqueue({ kind: 'text', chunks: ['hi alice'] });
    client.send({ type: 'message', id: 'a1', data: { message: 'Hello from a socket' } });
    const done = (await client.until(isDoneOf('a1'))).at(-1)?.data.event;
    const conversationId = done.metadata.conversationId as string;
    expect((await requestAs(service, alice, 'GET', `/api/conversation/${conversationId}`)).status).toBe(200);
    expect((await requestAs(service, await user('ws-bob'), 'GET', `/api/conversation/${conversationId}`)).status).toBe(404);
    client.close();
  });

  it('the socket closes with 4401 when its token expires', async () => {
    const client = await open(wsUrl(service.url, `/ws?access_token=${await user('short', { exp: now() + 2 })}`));
    const started = Date.now();
    const { code } = await client.closed;
    expect(code).toBe(4401);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a fresh token of the same user sent over the socket keeps it open; another user’s is refused', async () => {
    const client = await open(wsUrl(service.url, `/ws?access_token=${await user('renewing', { exp: now() + 2 })}`));
    client.send({ type: 'message', id: 'not-mine', data: { action: 'auth', token: await user('someone-else') } });
    const [refused] = await client.until((frame) => frame.type === 'error');
    expect(refused?.data).toMatchObject({ requestId: 'not-mine', code: 'UNAUTHORIZED' });
    client.send({ type: 'message', id: 'bad', data: { action: 'auth', token: 'a.b.c' } });
    const [invalid] = await client.until((frame) => frame.type === 'error');
    expect(invalid?.data).toMatchObject({ requestId: 'bad', code: 'UNAUTHORIZED' });

    client.send({ type: 'message', id: 'renew', data: { action: 'auth', token: await user('renewing', { exp: now() + 300 }) } });
    await sleep(3500);
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    client.close();
  });
});
