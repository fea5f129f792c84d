import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { describeOnDatabases, postgresAvailable } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { openSse } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §12 "Idempotency": a repeat of a chat POST with the same Idempotency-Key starts nothing
// and stores nothing and gets the first request's answer; the same key with another body is a 400;
// an attempt that failed with nothing stored (a 429 or 503 before the provider's 2xx) frees its key
// so the client's retry runs. Driven as clients do it: the `openai` SDK retrying a 503 with its
// `idempotencyKey`, two retries racing each other, and a retry landing on another instance.

const upstreamKey = 'sk-upstream-idem-1';

/**
 * The `openai` SDK sends its `idempotencyKey` request option only when the client names the header
 * (OpenAI's own API takes none, so the stock client leaves it unset); a client for this service does.
 */
class KeyedOpenAI extends OpenAI {
  protected override idempotencyHeader = 'Idempotency-Key';
}

const newKey = () => `key-${crypto.randomUUID()}`;

describeOnDatabases('Idempotency-Key on chat requests', (kind) => {
  let openai: FakeProvider;
  let ollama: FakeOllama;
  let service: TestService;

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: upstreamKey });
    ollama = await startFakeOllama();
    service = await startTestService(kind, {
      OPENAI_BASE_URL: openai.url,
      OLLAMA_BASE_URL: ollama.url,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
    });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await Promise.all([openai.close(), ollama.close()]);
  });
  beforeEach(() => {
    openai.reset();
    ollama.reset();
  });

  /** Conversations holding a message with exactly this content (each test uses its own text). */
  const conversationsWith = (content: string) => service.service.deps.store.db.conversation.count({ where: { messages: { some: { content } } } });
  const messagesOf = async (conversationId: string) =>
    (await service.request('GET', `/api/conversation/${conversationId}`)).body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);

  it('the openai SDK retrying a 503 with its idempotencyKey: the retry runs, one conversation is stored, a later repeat is the same completion', async () => {
    openai.enqueue({ kind: 'fail', status: 503 }, { kind: 'text', chunks: ['Stored', ' once'] });
    const client = new KeyedOpenAI({ baseURL: `${service.url}/v1`, apiKey: upstreamKey, maxRetries: 2 });
    const key = newKey();
    const question = `sdk retry ${key}`;
    const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: question }] };
    const { data: completion, response } = await client.chat.completions.create(body, { idempotencyKey: key }).withResponse();
    expect(completion.choices[0]?.message.content).toBe('Stored once');
    // The SDK's two attempts, both with the key; the failed one left nothing behind.
    expect(openai.chatRequests()).toHaveLength(2);
    expect(await conversationsWith(question)).toBe(1);
    expect(response.headers.get('idempotent-replayed')).toBeNull();

    // Sent again later (a client that lost the reply): the same completion, no provider call, nothing stored.
    const again = await client.chat.completions.create(body, { idempotencyKey: key }).withResponse();
    expect(again.data).toEqual(completion);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.response.headers.get('x-conversation-id')).toBe(response.headers.get('x-conversation-id'));
    expect(openai.chatRequests()).toHaveLength(2);
    expect(await conversationsWith(question)).toBe(1);
  });

  it('two concurrent requests with one key make one generation: both get the same JSON reply, the exchange is stored once', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['slow ', 'and ', 'single'], chunkDelayMs: 150 });
    const key = newKey();
    const question = `race ${key}`;
    const send = () => service.request('POST', '/api/message', { json: { message: question, mode: 'chat' }, headers: { 'Idempotency-Key': key } });
    const [first, second] = await Promise.all([send(), send()]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(first.body.response).toBe('slow and single');
    expect(ollama.chatRequests()).toHaveLength(1);
    expect(await messagesOf(first.body.conversationId)).toEqual([`user: ${question}`, 'assistant: slow and single']);
  });

  it('two concurrent streaming requests with one key follow one stream from its start', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['one ', 'stream ', 'only'], chunkDelayMs: 100 });
    const key = newKey();
    const open = () => openSse(`${service.url}/api/message/stream`, { json: { message: `stream race ${key}`, mode: 'chat' }, headers: { 'Idempotency-Key': key } });
    const [first, second] = await Promise.all([open(), open()]);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('x-stream-id')).toBe(first.headers.get('x-stream-id'));
    const [a, b] = await Promise.all([first.events(), second.events()]);
    expect(b).toEqual(a);
    expect(a.at(-1)?.data.type).toBe('done');
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('the same key with another body, or on another chat path, is a 400 idempotency_key_reused and runs nothing', async () => {
    const key = newKey();
    const headers = { 'Idempotency-Key': key };
    expect((await service.request('POST', '/api/message', { json: { message: 'original', mode: 'chat' }, headers })).status).toBe(200);
    const changed = await service.request('POST', '/api/message', { json: { message: 'changed', mode: 'chat' }, headers });
    expect(expectEnvelope(changed, 400, 'INVALID_REQUEST').details).toMatchObject({ reason: 'idempotency_key_reused' });
    const otherPath = await service.request('POST', '/api/unified/message', { json: { message: 'original', mode: 'chat', provider: 'ollama' }, headers });
    expect(expectEnvelope(otherPath, 400, 'INVALID_REQUEST').details).toMatchObject({ reason: 'idempotency_key_reused' });
    const v1 = await service.request('POST', '/v1/chat/completions', {
      json: { model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'original' }] },
      headers,
    });
    expect(v1.status).toBe(400);
    expect(v1.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(ollama.chatRequests()).toHaveLength(1);
    expect(await conversationsWith('changed')).toBe(0);
  });

  it('refuses keys that are empty, longer than 255, or not visible ASCII, naming the header', async () => {
    for (const key of ['', ' ', 'has space', 'x'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const reply = await service.request('POST', '/api/message', { json: { message: 'bad key', mode: 'chat' }, headers: { 'Idempotency-Key': key } });
      expect(expectEnvelope(reply, 400, 'INVALID_REQUEST').details, JSON.stringify(key)).toMatchObject({ field: 'Idempotency-Key' });
    }
    expect((await service.request('POST', '/api/message', { json: { message: 'long key', mode: 'chat' }, headers: { 'Idempotency-Key': '~'.repeat(255) } })).status).toBe(200);
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('a 503 before the provider answered takes its question back: the retry runs and the conversation holds it once', async () => {
    // In a conversation that exists, and in a new one the failed attempt made.
    const existing = await service.request('POST', '/api/message', { json: { message: 'earlier', mode: 'chat' } });
    const conversationId = existing.body.conversationId as string;
    for (const target of [{ conversation_id: conversationId }, {}]) {
      ollama.reset();
      ollama.enqueue({ kind: 'fail', status: 503 }, { kind: 'text', chunks: ['answered'] });
      const key = newKey();
      const question = `retry me ${key}`;
      const send = () => service.request('POST', '/api/message', { json: { message: question, mode: 'chat', ...target }, headers: { 'Idempotency-Key': key } });
      expectEnvelope(await send(), 503, 'MODEL_UNAVAILABLE');
      expect(await conversationsWith(question)).toBe(0);
      const retried = await send();
      expect(retried.status).toBe(200);
      expect(ollama.chatRequests()).toHaveLength(2);
      expect(await conversationsWith(question)).toBe(1);
      const messages = await messagesOf(retried.body.conversationId);
      expect(messages.filter((line: string) => line === `user: ${question}`)).toHaveLength(1);
      expect(messages.at(-1)).toBe('assistant: answered');
      if ('conversation_id' in target) expect(retried.body.context.messageCount).toBe(messages.length);
    }
  });

  it("an error after something was stored is the key's answer: a repeat gets it again without calling the provider", async () => {
    ollama.enqueue({ kind: 'fail', status: 400, body: { error: 'model is broken' } });
    const key = newKey();
    const send = () => service.request('POST', '/api/message', { json: { message: `kept error ${key}`, mode: 'chat' }, headers: { 'Idempotency-Key': key } });
    const first = await send();
    expect(first.status).toBeGreaterThanOrEqual(400);
    const second = await send();
    expect(second.status).toBe(first.status);
    expect(second.body.error.code).toBe(first.body.error.code);
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('keys belong to the caller over /trpc too: the typed transport shares the mechanism', async () => {
    const key = newKey();
    const call = () =>
      fetch(`${service.url}/trpc/chat.send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ json: { message: `trpc ${key}`, mode: 'chat' } }),
      }).then(async (reply) => ({ status: reply.status, body: (await reply.json()) as any }));
    const first = await call();
    const second = await call();
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.result.data.json.metadata.messageId).toBe(first.body.result.data.json.metadata.messageId);
    expect(ollama.chatRequests()).toHaveLength(1);
  });
});

describe('Idempotency-Key per caller (auth on)', () => {
  let idp: TestIdentityProvider;
  let ollama: FakeOllama;
  let service: TestService;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    ollama = await startFakeOllama();
    service = await startAuthService('sqlite', idp, { OLLAMA_BASE_URL: ollama.url });
    idp.define('ann', { sub: 'ann', roles: ['Dev'] });
    idp.define('bob', { sub: 'bob', roles: ['Dev'] });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
    await ollama.close();
  });

  it("another user's same key (and same body) is another request: both run, each gets their own answer", async () => {
    const [ann, bob] = await Promise.all([idp.tokenFor('ann'), idp.tokenFor('bob')]);
    const options = { json: { message: 'same words', mode: 'chat' }, headers: { 'Idempotency-Key': 'shared-key-1' } };
    const first = await requestAs(service, ann, 'POST', '/api/message', options);
    const second = await requestAs(service, bob, 'POST', '/api/message', options);
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.conversationId).not.toBe(first.body.conversationId);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(ollama.chatRequests()).toHaveLength(2);
    // Bob's key is his: a different body under it is his reuse, never Ann's.
    const reused = await requestAs(service, bob, 'POST', '/api/message', { ...options, json: { message: 'other words', mode: 'chat' } });
    expect(expectEnvelope(reused, 400, 'INVALID_REQUEST').details).toMatchObject({ reason: 'idempotency_key_reused' });
  });
});

describe.runIf(redisAvailable && postgresAvailable)('Idempotency-Key across two instances (PostgreSQL + Redis)', () => {
  let ollama: FakeOllama;
  let first: TestService;
  let second: TestService;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    const env = { REDIS_URL: redisUrl, CLUSTER_SECRET: 'idempotency-test-cluster-secret', REDIS_KEY_PREFIX: freshRedisPrefix(), OLLAMA_BASE_URL: ollama.url };
    first = await startTestService('postgresql', env);
    second = await startTestService('postgresql', env, first.database);
  });
  afterAll(async () => {
    await second.stop();
    await first[Symbol.asyncDispose]();
    await ollama.close();
  });
  beforeEach(() => {
    ollama.reset();
  });

  it('a repeat reaching the other instance while the first still runs waits for its answer: one generation', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['across ', 'the ', 'cluster'], chunkDelayMs: 200 });
    const options = { json: { message: `cluster race ${newKey()}`, mode: 'chat' }, headers: { 'Idempotency-Key': newKey() } };
    const [a, b] = await Promise.all([first.request('POST', '/api/message', options), second.request('POST', '/api/message', options)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('a stream started on one instance is the answer to its repeat on the other, replayed from the start', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['replayed ', 'elsewhere'], chunkDelayMs: 100 });
    const options = { json: { message: `cluster stream ${newKey()}`, mode: 'chat' }, headers: { 'Idempotency-Key': newKey() } };
    const started = await openSse(`${first.url}/api/message/stream`, options);
    const events = await started.events();
    const repeated = await openSse(`${second.url}/api/message/stream`, options);
    expect(repeated.status).toBe(200);
    expect(repeated.headers.get('x-stream-id')).toBe(started.headers.get('x-stream-id'));
    expect(await repeated.events()).toEqual(events);
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('a 503 on one instance frees the key: the retry on the other runs; a different body there is refused', async () => {
    ollama.enqueue({ kind: 'fail', status: 503 }, { kind: 'text', chunks: ['second try'] });
    const key = newKey();
    const options = { json: { message: `cluster retry ${key}`, mode: 'chat' }, headers: { 'Idempotency-Key': key } };
    expectEnvelope(await first.request('POST', '/api/message', options), 503, 'MODEL_UNAVAILABLE');
    const retried = await second.request('POST', '/api/message', options);
    expect(retried.status).toBe(200);
    expect(retried.body.response).toBe('second try');
    const reused = await first.request('POST', '/api/message', { ...options, json: { message: 'different', mode: 'chat' } });
    expect(expectEnvelope(reused, 400, 'INVALID_REQUEST').details).toMatchObject({ reason: 'idempotency_key_reused' });
    expect(ollama.chatRequests()).toHaveLength(2);
  });
});
