import { afterAll, beforeAll, expect, it } from 'vitest';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { makeFolder } from '../helpers/fixture-folders.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { openSse } from '../helpers/sse.js';
import type { TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// With real tokens: what the audit log records about them (CONTRACT §5: login, refresh, failures,
// denials, role changes; never the token), and that each token's subject owns its data.

describeOnDatabases('token sessions, audit and ownership', (kind) => {
  let idp: TestIdentityProvider;
  let service: TestService;
  let fake: FakeOllama;
  const issued: string[] = [];

  beforeAll(async () => {
    idp = await startIdentityProvider();
    fake = await startFakeOllama();
    service = await startAuthService(kind, idp, { RATE_LIMIT_ENABLED: 'false', OLLAMA_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
    await fake.close();
  });

  async function sign(claims: Record<string, unknown>): Promise<string> {
    const token = await idp.sign(claims);
    issued.push(token);
    return token;
  }
  const me = (token: string | null) => requestAs(service, token, 'GET', '/api/auth/me');
  const auditOf = (userId: string, type?: string) =>
    service.service.deps.store.db.auditEntry.findMany({ where: { userId, ...(type ? { type } : {}) }, orderBy: { timestamp: 'asc' } });

  it('a session is one login however many requests; a new token in it is one refresh; without sid each new token is a login', async () => {
    const first = await sign({ sub: 'session-user', sid: 'sid-1', realm_access: { roles: ['User'] } });
    for (let i = 0; i < 3; i++) expect((await me(first)).status).toBe(200);
    const refreshed = await sign({ sub: 'session-user', sid: 'sid-1', realm_access: { roles: ['User'] } });
    await me(refreshed);
    await me(refreshed);
    const noSid = await sign({ sub: 'session-user', realm_access: { roles: ['User'] } });
    await me(noSid);
    await me(noSid);
    const entries = await auditOf('session-user', 'auth');
    expect(entries.map((entry) => (entry.details as { action: string }).action)).toEqual(['login', 'refresh', 'login']);
    expect(entries[0]).toMatchObject({ ip: '127.0.0.1', risk: null, details: { action: 'login', roles: ['User'] } });
  });

  it('two instances on one database record a new session once', async () => {
    await using second = await startAuthService(kind, idp, { RATE_LIMIT_ENABLED: 'false' });
    const token = await sign({ sub: 'two-instances', sid: 'sid-shared', realm_access: { roles: ['User'] } });
    const replies = await Promise.all([me(token), requestAs(second, token, 'GET', '/api/auth/me'), me(token)]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200]);
    expect(await auditOf('two-instances', 'auth')).toHaveLength(1);
  });

  it('roles differing from the last token are a `role` entry; the same roles again are none', async () => {
    idp.define('promoted', { sub: 'promoted-user', roles: ['User'] });
    await me(await idp.tokenFor('promoted'));
    idp.define('promoted', { sub: 'promoted-user', roles: ['Dev', 'User'] });
    const promoted = await me(await idp.tokenFor('promoted'));
    expect(promoted.body.roles).toEqual(['User', 'Dev']);
    await me(await idp.tokenFor('promoted'));
    const changes = await auditOf('promoted-user', 'role');
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ type: 'role', ip: '127.0.0.1', details: { action: 'changed', from: ['User'], to: ['User', 'Dev'] } });
  });

  it('refused tokens are audited as `anonymous` with the reason and the claimed subject, once a minute per client and reason', async () => {
    const expired = (sub: string) => sign({ sub, exp: Math.floor(Date.now() / 1000) - 120 });
    const failuresFor = async (reason: string) =>
      (await auditOf('anonymous', 'auth')).filter((entry) => (entry.details as { reason?: string }).reason === reason);
    // Distinct tokens, as a flood of junk would be: still one entry.
    for (const sub of ['late-user', 'late-user', 'someone-else']) expect((await me(await expired(sub))).status).toBe(401);
    const entries = await waitFor(async () => {
      const found = await failuresFor('expired');
      return found.length > 0 ? found : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await failuresFor('expired')).toHaveLength(1);
    expect(entries[0]).toMatchObject({ userId: 'anonymous', ip: '127.0.0.1', details: { action: 'failure', reason: 'expired', claimedSubject: 'late-user' } });
    // Another reason from the same client is its own entry.
    expect((await me(await sign({ sub: 'x', aud: 'https://elsewhere.example' }))).status).toBe(401);
    await waitFor(async () => ((await failuresFor('wrong_audience')).length === 1 ? true : undefined));
  });

  it('a 403 is audited as `access` with the missing permission, the subject and the address', async () => {
    const token = await sign({ sub: 'plain-user', realm_access: { roles: ['User'] } });
    const reply = await requestAs(service, token, 'GET', '/api/audit/log');
    expect(reply.status).toBe(403);
    expect(await auditOf('plain-user', 'access')).toMatchObject([{ ip: '127.0.0.1', details: { action: 'denied', missing: 'audit:view' } }]);
  });

  it('no token ever reaches the audit log', async () => {
    const all = JSON.stringify(await service.service.deps.store.db.auditEntry.findMany());
    expect(issued.length).toBeGreaterThan(5);
    for (const token of issued) {
      expect(all).not.toContain(token);
      expect(all).not.toContain(token.split('.')[2]);
    }
  });

  it("conversations and the current conversation belong to the token's subject; another user gets 404", async () => {
    const alice = await sign({ sub: 'alice', realm_access: { roles: ['User'] } });
    const bob = await sign({ sub: 'bob', realm_access: { roles: ['User'] } });
    const saved = await requestAs(service, alice, 'POST', '/api/conversation/save', {
      json: { title: 'Alice only', conversationData: { messages: [{ role: 'user', content: 'secret plans' }] } },
    });
    const id = saved.body.conversationId as string;
    expect((await requestAs(service, bob, 'GET', `/api/conversation/${id}`)).status).toBe(404);
    expect((await requestAs(service, bob, 'DELETE', `/api/conversation/${id}`)).status).toBe(404);
    expect((await requestAs(service, bob, 'GET', '/api/conversations')).body.total).toBe(0);
    expect((await requestAs(service, alice, 'GET', `/api/conversation/${id}`)).body.conversation.title).toBe('Alice only');
    expect((await requestAs(service, bob, 'POST', `/api/conversation/${id}/set-current`)).status).toBe(404);
    expect((await requestAs(service, alice, 'POST', `/api/conversation/${id}/set-current`)).status).toBe(200);
    expect((await requestAs(service, alice, 'GET', '/api/context')).body.context.conversationId).toBe(id);
    expect((await requestAs(service, bob, 'GET', '/api/context')).body.context.conversationId).not.toBe(id);
    // Regenerate and edit-and-resend (CONTRACT §12) on Alice's conversation: 404 for Bob, nothing replaced.
    const [question] = (await requestAs(service, alice, 'GET', `/api/conversation/${id}`)).body.messages as { id: string }[];
    const attempts = [
      { regenerate: true, conversation_id: id },
      { replyTo: question?.id, message: 'rewritten by bob', conversation_id: id },
    ];
    for (const body of attempts) {
      const reply = await requestAs(service, bob, 'POST', '/api/message', { json: { mode: 'chat', ...body } });
      expect(reply.status, reply.text).toBe(404);
    }
    // Without a conversation id Bob's own (empty) current conversation is meant: Alice's question is not his.
    expect((await requestAs(service, bob, 'POST', '/api/message', { json: { replyTo: question?.id, message: 'again', mode: 'chat' } })).status).toBe(400);
    const after = (await requestAs(service, alice, 'GET', `/api/conversation/${id}`)).body;
    expect(after.messages).toEqual([expect.objectContaining({ content: 'secret plans' })]);
    expect(after.messages[0].supersededBy).toBeUndefined();
    expect(fake.chatRequests().filter((request) => JSON.stringify(request.body).includes('secret plans'))).toEqual([]);
  });

  it("a stream belongs to its starter: replayed for them with access_token in the query, 404 for anyone else", async () => {
    const carol = await sign({ sub: 'carol', realm_access: { roles: ['User'] } });
    const dave = await sign({ sub: 'dave', realm_access: { roles: ['User'] } });
    fake.enqueue({ kind: 'text', chunks: ['Hel', 'lo'] });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'hi' }, headers: { authorization: `Bearer ${carol}` } });
    expect(stream.status).toBe(200);
    const live = await stream.events();
    const streamId = stream.headers.get('x-stream-id') ?? '';

    const replay = await openSse(`${service.url}/api/streams/${streamId}?access_token=${carol}`);
    expect(replay.status).toBe(200);
    expect((await replay.events()).map((event) => event.data)).toEqual(live.map((event) => event.data));
    expect((await openSse(`${service.url}/api/streams/${streamId}?access_token=${dave}`)).status).toBe(404);
    expect((await requestAs(service, dave, 'POST', `/api/streams/${streamId}/abort`)).status).toBe(404);
    expect((await openSse(`${service.url}/api/streams/${streamId}`)).status).toBe(401);
  });

  it('the active workspace is per user; one never set is the first registered', async () => {
    using first = makeFolder();
    using second = makeFolder();
    const dev = await sign({ sub: 'erin', realm_access: { roles: ['Dev'] } });
    const other = await sign({ sub: 'frank', realm_access: { roles: ['Dev'] } });
    const add = (path: string, name: string) => requestAs(service, dev, 'POST', '/api/workspaces/add', { json: { path, name } });
    const firstId = (await add(first.path, 'first')).body.workspaceId as string;
    const secondId = (await add(second.path, 'second')).body.workspaceId as string;
    expect((await requestAs(service, dev, 'POST', '/api/workspaces/switch', { json: { workspaceId: secondId } })).status).toBe(200);
    expect((await requestAs(service, dev, 'GET', '/api/context')).body.context.workspace.id).toBe(secondId);
    expect((await requestAs(service, other, 'GET', '/api/context')).body.context.workspace.id).toBe(firstId);
    for (const id of [firstId, secondId]) await requestAs(service, dev, 'DELETE', `/api/workspaces/${id}`);
  });
});
