import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { spawnService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases, postgresAvailable } from '../helpers/databases.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';
import { MESSAGE_OVERHEAD_TOKENS } from '../../src/core/usage/token-estimate.js';

// CONTRACT §13 from outside: every provider call lands in the ledger, quotas are checked before
// the call (the fake provider counts what reached it), reservations make them exact under
// concurrency, and every way a call can end settles its reservation.

const upstreamKey = 'sk-quota-test-upstream';
const prices = JSON.stringify({ 'openai/gpt-4o-mini': { input: 0.15, output: 0.6 } });

type Policy = { quotas?: unknown[]; modelAccess?: unknown[] };

describeOnDatabases('usage ledger and quotas', (kind) => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let service: TestService;

  const setPolicy = async (policy: Policy) => {
    const reply = await service.request('PUT', '/api/policies', { json: { quotas: [], modelAccess: [], ...policy } });
    expect(reply.status, reply.text).toBe(200);
  };
  const ask = (message: string, extra: Record<string, unknown> = {}) => service.request('POST', '/api/message', { json: { message, ...extra } });
  const usage = async (query = 'groupBy=model') => (await service.request('GET', `/api/usage?${query}`)).body;
  /** Settling runs after the reply: wait until the ledger holds `calls` calls in all. */
  const ledgerHolds = (calls: number) => waitFor(async () => ((await usage()).totals.requests === calls ? true : undefined), 5000, `${calls} calls in the ledger`);

  beforeAll(async () => {
    ollama = await startFakeOllama();
    openai = await startFakeOpenAI({ apiKey: upstreamKey });
    service = await startTestService(kind, {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: upstreamKey,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      MODEL_PRICES: prices,
      QUOTA_OUTPUT_TOKENS: '500',
      // The bursts below are about quotas, not the per-user stream cap.
      MAX_STREAMS_PER_USER: '100',
    });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close()]);
  });
  beforeEach(async () => {
    ollama.reset();
    openai.reset();
    await setPolicy({});
    // The last test's calls may still be settling: they must not land in this one's ledger.
    await service.service.deps.usage.settled();
    await service.service.deps.store.db.usageEntry.deleteMany();
    await service.service.deps.store.db.usageTotal.deleteMany();
  });

  it('records each call with the provider’s counts and its price; a cut-off stream is estimated and marked', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['Hi'], usage: { input: 12, output: 3 } });
    expect((await ask('count me')).status).toBe(200);
    openai.enqueue({ kind: 'text', chunks: ['Priced'], usage: { input: 1000, output: 100 } });
    expect((await ask('price me', { model: 'openai/gpt-4o-mini' })).status).toBe(200);
    ollama.enqueue({ kind: 'cut', chunks: ['Half an ', 'answer'], after: 2 });
    await service.request('POST', '/api/message/stream', { json: { message: 'cut me' } });
    await ledgerHolds(3);
    const byModel = await usage();
    const rows = Object.fromEntries(byModel.rows.map((row: { key: string }) => [row.key, row]));
    expect(rows['ollama/llama3.2']).toMatchObject({ requests: 2, estimated: 1, costUsd: null });
    expect(rows['ollama/llama3.2'].inputTokens).toBeGreaterThan(12);
    expect(rows['openai/gpt-4o-mini']).toMatchObject({ inputTokens: 1000, outputTokens: 100, requests: 1, estimated: 0 });
    // 1000 × $0.15/M + 100 × $0.6/M
    expect(rows['openai/gpt-4o-mini'].costUsd).toBeCloseTo(0.00021, 8);
    const byDay = await usage('groupBy=day');
    expect(byDay.rows).toHaveLength(1);
    expect(byDay.rows[0].key).toBe(new Date().toISOString().slice(0, 10));
  });

  it('a request quota admits exactly its limit of 50 concurrent requests; the rest get 429 with details.quota and Retry-After, and never reach the provider', async () => {
    await setPolicy({ quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 10 }] });
    ollama.setDefault({ kind: 'text', chunks: ['ok'], chunkDelayMs: 20, usage: { input: 5, output: 1 } });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, index) => ask(`burst ${index}`)));
    ollama.setDefault({ kind: 'text', chunks: ['Hello', ' from', ' fake'] });
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(10);
    const refused = replies.filter((reply) => reply.status !== 200);
    expect(refused).toHaveLength(40);
    for (const reply of refused) {
      expectEnvelope(reply, 429, 'RATE_LIMIT_EXCEEDED');
      expect(reply.body.error.details.quota).toMatchObject({ window: 'day', metric: 'requests', limit: 10 });
      expect(Date.parse(reply.body.error.details.quota.resetAt)).toBeGreaterThan(Date.now());
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(ollama.chatRequests()).toHaveLength(10);
    // A refused question is taken back: only the ten answered conversations hold a burst question.
    expect(await service.service.deps.store.db.message.count({ where: { content: { startsWith: 'burst ' } } })).toBe(10);
    const limits = (await service.request('GET', '/api/usage/limits')).body.limits;
    expect(limits).toEqual([expect.objectContaining({ window: 'day', metric: 'requests', limit: 10, remaining: 0 })]);
  });

  it('a token quota cuts the output limit to what is left and sends it as num_predict; spent, it refuses', async () => {
    // `local` holds every role, and a role without a rule leaves its holder unlimited: all five get one.
    await setPolicy({ quotas: ['User', 'Admin', 'Dev', 'Lead', 'TheDude'].map((role) => ({ subject: { role }, window: 'day', tokens: 4_000 })) });
    ollama.enqueue({ kind: 'text', chunks: ['small'], usage: { input: 40, output: 5 } });
    expect((await service.request('POST', '/api/context/clear')).status).toBe(200);
    expect((await ask('short')).status).toBe(200);
    const first = ollama.chatRequests()[0]?.body as { messages: { role: string; content: string }[]; options?: { num_predict?: number } };
    // Nothing used yet: the configured output limit (QUOTA_OUTPUT_TOKENS=500) fits whole.
    expect(first.options?.num_predict).toBe(500);
    await ledgerHolds(1);
    // The worst case of a prompt is its UTF-8 bytes plus a fixed overhead per message: size the next
    // question (in a new conversation: no history) so that exactly 200 tokens are left for the output.
    const system = Buffer.byteLength(first.messages.find((message) => message.role === 'system')?.content ?? '');
    const question = 'é'.repeat(Math.floor((4_000 - 45 - system - 2 * MESSAGE_OVERHEAD_TOKENS - 200) / 2));
    const sent = system + Buffer.byteLength(question) + 2 * MESSAGE_OVERHEAD_TOKENS;
    ollama.enqueue({ kind: 'text', chunks: ['cut'], usage: { input: 400, output: 20 } });
    expect((await service.request('POST', '/api/context/clear')).status).toBe(200);
    expect((await ask(question)).status).toBe(200);
    const second = ollama.chatRequests()[1]?.body as { options?: { num_predict?: number } };
    expect(second.options?.num_predict).toBe(4_000 - 45 - sent);
    await ledgerHolds(2);
    // 465 used: the same prompt no longer leaves a single token for the output.
    expect((await service.request('POST', '/api/context/clear')).status).toBe(200);
    const spent = await ask(question);
    expectEnvelope(spent, 429, 'RATE_LIMIT_EXCEEDED');
    expect(spent.body.error.details.quota).toMatchObject({ window: 'day', metric: 'tokens', limit: 4_000, used: 465 });
    expect(ollama.chatRequests()).toHaveLength(2);
  });

  it('a cost quota refuses a model without a price with 403, and charges priced calls', async () => {
    await setPolicy({ quotas: [{ subject: { userId: 'local' }, window: 'month', costUsd: 1 }] });
    const unpriced = await ask('free model?');
    expectEnvelope(unpriced, 403, 'FORBIDDEN');
    expect(unpriced.body.error.details).toMatchObject({ model: 'ollama/llama3.2', quota: { metric: 'costUsd' } });
    openai.enqueue({ kind: 'text', chunks: ['Paid'], usage: { input: 10, output: 10 } });
    expect((await ask('paid model', { model: 'openai/gpt-4o-mini' })).status).toBe(200);
    expect(ollama.chatRequests()).toHaveLength(0);
  });

  it('a failed and an aborted call settle: nothing stays reserved and the ledger says how each ended', async () => {
    await setPolicy({ quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 2 }] });
    ollama.enqueue({ kind: 'fail', status: 500 });
    expectEnvelope(await ask('fails'), 503, 'MODEL_UNAVAILABLE');
    ollama.enqueue({ kind: 'stallMidStream', chunks: ['never', ' ends'], after: 1 });
    const stream = await fetch(`${service.url}/api/message/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'stop me' }) });
    const streamId = stream.headers.get('x-stream-id') ?? '';
    await ollama.waitForChatRequests(2);
    expect((await service.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    await stream.text();
    await ledgerHolds(2);
    const outcomes = (await service.service.deps.store.db.usageEntry.findMany()).map((entry) => entry.outcome).sort();
    expect(outcomes).toEqual(['aborted', 'failed']);
    expect(await service.service.deps.store.db.quotaLease.count()).toBe(0);
    // Both count as requests today: a third is refused.
    expectEnvelope(await ask('third'), 429, 'RATE_LIMIT_EXCEEDED');
  });

  it('a bad policy document is refused with 400 naming the path; a change is audited', async () => {
    const bad = await service.request('PUT', '/api/policies', { json: { quotas: [{ subject: { role: 'User' }, window: 'week', tokens: 5 }], modelAccess: [] } });
    // An empty document would wipe every policy by accident: both parts must be given.
    expectEnvelope(await service.request('PUT', '/api/policies', { json: {} }), 400, 'INVALID_REQUEST');
    expectEnvelope(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.issues[0].path).toEqual(['quotas', 0, 'window']);
    const kept = await service.request('GET', '/api/policies');
    expect(kept.body.policy).toEqual({ quotas: [], modelAccess: [] });
    await setPolicy({ quotas: [{ subject: { role: 'User' }, window: 'day', tokens: 5 }] });
    const audit = await service.request('GET', '/api/audit/log?type=role');
    expect(audit.body.entries[0].details).toMatchObject({ action: 'policy_changed' });
  });

  it('/v1 answers a spent quota as OpenAI does (insufficient_quota, x-should-retry: false), and the openai SDK does not retry it', async () => {
    await setPolicy({ quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 0 }] });
    const client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'unused', maxRetries: 3 });
    const started = Date.now();
    const failure = await client.chat.completions.create({ model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect((failure as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect((failure as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-should-retry')).toBe('false');
    // Retries would wait Retry-After (hours here); the SDK gave up at once.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(ollama.chatRequests()).toHaveLength(0);
  });
});

describe.runIf(postgresAvailable && redisAvailable)('quotas across two instances sharing Redis', () => {
  let ollama: FakeOllama;
  let first: TestService;
  let second: TestService;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    const env = { REDIS_URL: redisUrl, CLUSTER_SECRET: 'quota-test-cluster-secret', REDIS_KEY_PREFIX: freshRedisPrefix(), OLLAMA_BASE_URL: ollama.url, AI_MODEL_PROVIDER: 'ollama', AI_MODEL_NAME: 'llama3.2', POLICY_REFRESH_MS: '200', MAX_STREAMS_PER_USER: '100' };
    first = await startTestService('postgresql', env);
    second = await startTestService('postgresql', env, first.database);
  });
  afterAll(async () => {
    await second.stop();
    await first[Symbol.asyncDispose]();
    await ollama.close();
  });

  it('a policy stored on one instance holds on the other; 50 requests spread over both admit exactly 10', async () => {
    const stored = await first.request('PUT', '/api/policies', { json: { quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 10 }], modelAccess: [] } });
    expect(stored.status).toBe(200);
    await waitFor(async () => ((await second.request('GET', '/api/usage/limits')).body.limits.length === 1 ? true : undefined));
    ollama.setDefault({ kind: 'text', chunks: ['ok'], chunkDelayMs: 20 });
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? first : second).request('POST', '/api/message', { json: { message: `spread ${index}`} })),
    );
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(10);
    expect(replies.filter((reply) => reply.status === 429)).toHaveLength(40);
    expect(ollama.chatRequests()).toHaveLength(10);
  });

  it('a token quota under concurrent streams using less than reserved is never overshot, and what they leave is used by later ones', async () => {
    await first.request('PUT', '/api/policies', { json: { quotas: [{ subject: { userId: 'local' }, window: 'day', tokens: 3_000 }], modelAccess: [] } });
    await waitFor(async () => ((await second.request('GET', '/api/usage/limits')).body.limits[0]?.metric === 'tokens' ? true : undefined));
    ollama.reset();
    // Each reservation is the prompt's worst case (a few hundred bytes) plus 400; each call uses 250.
    ollama.setDefault({ kind: 'text', chunks: ['long'], chunkDelayMs: 10, usage: { input: 50, output: 200 } });
    const wave = () =>
      Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          (index % 2 === 0 ? first : second).request('POST', '/api/message', { json: { message: `tokens ${index}`, newConversation: true, maxTokens: 400 } }),
        ),
      );
    let admitted = 0;
    for (let round = 0; round < 4; round++) {
      admitted += (await wave()).filter((reply) => reply.status === 200).length;
      await waitFor(async () => ((await first.request('GET', '/api/usage?groupBy=model')).body.totals.requests >= admitted ? true : undefined));
    }
    const used = (await first.request('GET', '/api/usage?groupBy=model')).body.totals.totalTokens;
    expect(used).toBeLessThanOrEqual(3_000);
    // Settling to the real size freed room: more calls ran than the reservations alone allowed.
    expect(admitted).toBeGreaterThan(3);
    expect(ollama.chatRequests()).toHaveLength(admitted);
  });
});

describe('a crash in the middle of a provider call', () => {
  it('leaves the ledger consistent: the lapsed reservation is settled as recovered, with what the answer had stored', async () => {
    await using ollama = await startFakeOllama();
    const database = await createTestDatabase('sqlite');
    const env = { DATABASE_URL: database.url, OLLAMA_BASE_URL: ollama.url, AI_MODEL_PROVIDER: 'ollama', AI_MODEL_NAME: 'llama3.2', QUOTA_LEASE_MS: '1000' };
    try {
      const child = await spawnService(env);
      try {
        const policy = await fetch(`${child.url}/api/policies`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 5 }], modelAccess: [] }),
        });
        expect(policy.status).toBe(200);
        ollama.enqueue({ kind: 'stallMidStream', chunks: ['A partial answer', ' that never ends'], after: 2 });
        const stream = await fetch(`${child.url}/api/message/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'crash here' }) });
        expect(stream.status).toBe(200);
        await ollama.waitForChatRequests(1);
        // The answer writer stores a growing answer every 250 ms.
        await new Promise((resolve) => setTimeout(resolve, 600));
      } finally {
        child.child.kill('SIGKILL');
        await child.exit;
      }
      // Its lease outlives it until it lapses (QUOTA_LEASE_MS after its last renewal).
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await using restarted = await startTestService('sqlite', env, database);
      await restarted.service.deps.usage.settled();
      const entries = await restarted.service.deps.store.db.usageEntry.findMany();
      expect(entries).toEqual([expect.objectContaining({ outcome: 'recovered', estimated: true, provider: 'ollama', model: 'llama3.2' })]);
      // "A partial answer that never ends" is 32 bytes: about 8 tokens.
      expect(entries[0]?.outputTokens).toBeGreaterThan(0);
      expect(await restarted.service.deps.store.db.quotaLease.count()).toBe(0);
      const limits = (await restarted.request('GET', '/api/usage/limits')).body.limits;
      expect(limits).toEqual([expect.objectContaining({ metric: 'requests', used: 1, remaining: 4 })]);
    } finally {
      await database.drop();
    }
  });
});
