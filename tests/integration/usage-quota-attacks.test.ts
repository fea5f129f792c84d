import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider, type Script } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { expectEnvelope, startTestService, type TestResponse, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §13 attacked from outside by an authenticated but hostile user (and a provider whose
// answers cannot be trusted): each test is a way around a quota, the ledger or model access that
// once worked or could, and what the service must do instead.

type Person = 'user' | 'admin' | 'lead' | 'dude';

/** A request quota of the day refused this: retrying before the next UTC midnight is pointless. */
function expectDayRefusal(reply: TestResponse) {
  const error = expectClean(reply, 429, 'RATE_LIMIT_EXCEEDED');
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  expect(error.details.quota).toMatchObject({ window: 'day', metric: 'requests', resetAt: new Date(midnight).toISOString() });
  expect(Math.abs(Number(reply.headers.get('retry-after')) - (midnight - now.getTime()) / 1000)).toBeLessThan(5);
}

/** No stack, no internals: what every refusal below must look like. */
function expectClean(reply: TestResponse, status: number, code: string) {
  const error = expectEnvelope(reply, status, code);
  expect(reply.text).not.toMatch(/\bat .+\.(ts|js):\d+/);
  expect(reply.text).not.toContain('stack');
  return error;
}

/** The conversation a streamed answer's `done` event names. */
function conversationOf(stream: TestResponse): string {
  const id = /"type":"done","metadata":\{"conversationId":"([^"]+)"/.exec(stream.text)?.[1];
  expect(id, stream.text).toBeDefined();
  return id ?? '';
}

describeOnDatabases('usage and quota attacks', (kind) => {
  let idp: TestIdentityProvider;
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let svc: TestService;
  const tokens = new Map<Person, string>();
  const as = (person: Person, method: string, path: string, json?: unknown) => requestAs(svc, tokens.get(person) ?? '', method, path, json === undefined ? {} : { json });
  const putPolicy = async (policy: unknown) => {
    const stored = await as('dude', 'PUT', '/api/policies', { quotas: [], modelAccess: [], ...(policy as object) });
    expect(stored.status, stored.text).toBe(200);
  };
  const ledger = () => svc.service.deps.store.db.usageEntry.findMany({ orderBy: { createdAt: 'asc' } });

  beforeAll(async () => {
    idp = await startIdentityProvider();
    [ollama, openai, anthropic] = await Promise.all([startFakeOllama(), startFakeOpenAI(), startFakeAnthropic()]);
    svc = await startAuthService(kind, idp, {
      ENABLE_SCHEDULING: 'false',
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: 'sk-attack',
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: 'sk-ant-attack',
      MAX_TOOL_STEPS: '5',
      // Priced without its tag: `llama3.2:latest` is the same model and must cost the same.
      MODEL_PRICES: JSON.stringify({ 'ollama/llama3.2': { input: 1, output: 1 } }),
    });
    const people: [Person, string[]][] = [
      ['user', ['User']],
      ['admin', ['Admin']],
      ['lead', ['Lead']],
      ['dude', ['TheDude']],
    ];
    for (const [person, roles] of people) {
      idp.define(person, { sub: `attack-${person}`, roles });
      tokens.set(person, await idp.tokenFor(person));
    }
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close(), idp[Symbol.asyncDispose]()]);
  });
  beforeEach(async () => {
    ollama.reset();
    openai.reset();
    anthropic.reset();
    await putPolicy({});
    await svc.service.deps.usage.settled();
    await svc.service.deps.store.db.usageEntry.deleteMany();
    await svc.service.deps.store.db.usageTotal.deleteMany();
  });

  it('an allow pattern with many * against a long model name is decided at once (no catastrophic backtracking)', async () => {
    // `*` was compiled to `.*`: five of them and a suffix that fails took seconds per check on a
    // 140-character name, the event loop held all the while (minutes at 250 characters).
    await putPolicy({ modelAccess: [{ role: 'User', allow: ['ollama/llama3.2', 'ollama/*a*a*a*a*b'] }] });
    const hostile = `ollama/${'a'.repeat(140)}`;
    const started = performance.now();
    const refused = await as('user', 'POST', '/v1/chat/completions', { model: hostile, messages: [{ role: 'user', content: 'hi' }] });
    const chat = await as('user', 'POST', '/api/message', { message: 'hi', model: hostile });
    const elapsed = performance.now() - started;
    expect(refused.status).toBe(403);
    expectClean(chat, 403, 'FORBIDDEN');
    expect(elapsed).toBeLessThan(1000);
    expect(ollama.chatRequests()).toHaveLength(0);
    // The patterns still mean what they say: `*` any run (also none), case-insensitive, `:latest` implied.
    const allowed = [`ollama/${'a'.repeat(50)}b`, 'ollama/a-a-a-a-b', 'ollama/aaaab', 'ollama/AxAyAzAwB', 'ollama/llama3.2:latest', 'ollama/LLAMA3.2'];
    // (The fake knows none of them but llama3.2: allowed means the provider was asked.)
    for (const [index, model] of allowed.entries()) {
      await as('user', 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
      expect(ollama.chatRequests(), model).toHaveLength(index + 1);
    }
    for (const model of ['ollama/aaaa', 'ollama/aaab.', 'ollama/ab', 'ollama/llama3.2:1b', 'ollama/xllama3.2']) {
      expect((await as('user', 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] })).status, model).toBe(403);
    }
    expect(ollama.chatRequests()).toHaveLength(allowed.length);
  });

  it('counts a provider reports that are negative, fractional or absurd never shrink the totals nor lose the call', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 5_000 }] });
    // A negative count would hand the quota back; a fraction made PostgreSQL refuse the whole settle.
    ollama.enqueue({ kind: 'text', chunks: ['negative'], usage: { input: -1_000_000, output: 3 } });
    expect((await as('user', 'POST', '/api/message', { message: 'one', newConversation: true })).status).toBe(200);
    ollama.enqueue({ kind: 'text', chunks: ['fraction'], usage: { input: 10.5, output: 2.25 } });
    expect((await as('user', 'POST', '/api/message', { message: 'two', newConversation: true })).status).toBe(200);
    ollama.enqueue({ kind: 'text', chunks: ['absurd'], usage: { input: 1e15, output: 1 } });
    expect((await as('user', 'POST', '/api/message', { message: 'three', newConversation: true })).status).toBe(200);
    await svc.service.deps.usage.settled();
    const entries = await ledger();
    expect(entries).toHaveLength(3);
    for (const entry of entries) {
      expect(Number.isInteger(entry.inputTokens) && entry.inputTokens >= 0, String(entry.inputTokens)).toBe(true);
      expect(Number.isInteger(entry.outputTokens) && entry.outputTokens >= 0, String(entry.outputTokens)).toBe(true);
    }
    const [limit] = (await as('user', 'GET', '/api/usage/limits')).body.limits;
    expect(limit.used).toBeGreaterThanOrEqual(5_000);
    expect(limit.remaining).toBe(0);
    expectClean(await as('user', 'POST', '/api/message', { message: 'four', newConversation: true }), 429, 'RATE_LIMIT_EXCEEDED');
    expect(ollama.chatRequests()).toHaveLength(3);
  });

  it('the model spelled with :latest, as the lists name it, costs what its price says: a cost quota is not sidestepped', async () => {
    // $1 per million tokens: a quota of $0.0001 is 100 tokens, which the first call's reservation
    // fits in and its real count (1,005) uses up.
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', costUsd: 0.0001 }] });
    ollama.enqueue({ kind: 'text', chunks: ['priced'], usage: { input: 1000, output: 5 } });
    const first = await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2:latest', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
    expect(first.status, first.text).toBe(200);
    await svc.service.deps.usage.settled();
    const [entry] = await ledger();
    expect(entry).toMatchObject({ model: 'llama3.2:latest', inputTokens: 1000, outputTokens: 5 });
    expect(Number(entry?.costMicros)).toBe(1005);
    const again = await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2:latest', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('insufficient_quota');
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('a response_format schema is reserved as prompt: a huge schema behind a tiny message cannot overshoot a token quota', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 3_000 }] });
    const properties = Object.fromEntries(Array.from({ length: 400 }, (_, index) => [`field_${index}`, { type: 'string', description: 'x'.repeat(40) }]));
    const schema = { type: 'object', properties };
    const format = { type: 'json_schema', json_schema: { name: 'huge', schema } };
    const v1 = await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }], response_format: format });
    expect(v1.status).toBe(429);
    expect(v1.body.error.code).toBe('insufficient_quota');
    const rest = await as('user', 'POST', '/api/message', { message: 'hi', newConversation: true, options: { response_format: format } });
    expectClean(rest, 429, 'RATE_LIMIT_EXCEEDED');
    expect(ollama.chatRequests()).toHaveLength(0);
    // The same request without the schema fits.
    ollama.enqueue({ kind: 'text', chunks: ['{}'], usage: { input: 10, output: 1 } });
    expect((await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
  });

  it('a stream cut off before the provider counts is charged its worst case (a token a byte), not a typical count', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
    // 300 one-byte pieces and then the connection drops: no count ever arrives.
    ollama.enqueue({ kind: 'cut', chunks: Array.from({ length: 300 }, () => 'x'), after: 300 });
    await as('user', 'POST', '/api/message/stream', { message: 'cut me', newConversation: true });
    await waitFor(async () => ((await ledger()).length === 1 ? true : undefined));
    const [entry] = await ledger();
    expect(entry).toMatchObject({ estimated: true, outputTokens: 300 });
    // The prompt's worst case: at least its bytes plus the per-message overhead.
    expect(entry?.inputTokens).toBeGreaterThanOrEqual(Buffer.byteLength('cut me') + 8);
  });

  it('a provider that ignores max_tokens is cut off at the limit it was sent: the quota is charged that, not what it streamed', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
    // 400 one-token pieces where 20 were asked for: the fake, like a misbehaving server, ignores num_predict.
    const pieces = Array.from({ length: 400 }, (_, index) => `w${index % 10} `);
    ollama.enqueue({ kind: 'text', chunks: pieces, usage: { input: 10, output: 400 } });
    const reply = await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.status, reply.text).toBe(200);
    const sent = ollama.chatRequests()[0]?.body as { options?: { num_predict?: number } };
    expect(sent.options?.num_predict).toBe(20);
    expect(reply.body.choices[0].finish_reason).toBe('length');
    // At most the limit and its slack (8 + 10 %) of the 400 pieces reached the caller.
    const received = (reply.body.choices[0].message.content as string).split(' ').filter(Boolean).length;
    expect(received).toBeGreaterThanOrEqual(20);
    expect(received).toBeLessThanOrEqual(30);
    await svc.service.deps.usage.settled();
    const [entry] = await ledger();
    expect(entry).toMatchObject({ outcome: 'aborted', estimated: true, outputTokens: 20 });
    // Streamed on /api too: the answer stored is the cut one, ended by its length.
    ollama.enqueue({ kind: 'text', chunks: pieces, usage: { input: 10, output: 400 } });
    const streamed = await as('user', 'POST', '/api/message/stream', { message: 'again', newConversation: true, options: { maxTokens: 20 } });
    expect(streamed.status).toBe(200);
    expect(streamed.text).toContain('"finishReason":"length"');
    expect((streamed.text.match(/"type":"text"/g) ?? []).length).toBeLessThanOrEqual(30);
  });

  it('a provider that sends its whole answer as one huge piece is counted by its size: cut at the limit, not charged what it reports', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
    // One delta of 100,000 bytes where 20 tokens were asked for, then a count of 100,000: as one
    // piece it was one "token" to the cap, never cut, and the count was charged.
    ollama.enqueue({ kind: 'text', chunks: ['x'.repeat(100_000)], usage: { input: 10, output: 100_000 } });
    const reply = await as('user', 'POST', '/v1/chat/completions', { model: 'ollama/llama3.2', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body.choices[0].finish_reason).toBe('length');
    expect(reply.body.choices[0].message.content).toBe('');
    await svc.service.deps.usage.settled();
    const [entry] = await ledger();
    // Dropped, but streamed: the cut call is charged its limit, not nothing and not the count.
    expect(entry).toMatchObject({ outcome: 'aborted', estimated: true, outputTokens: 20 });
  });

  // Tool-call arguments are output as text is: billed, and counted against max_tokens by the provider.
  const endlessCalls: { provider: 'ollama' | 'openai' | 'anthropic'; model: string; fake: () => FakeProvider; script: Script }[] = [
    {
      provider: 'openai',
      model: 'openai/gpt-4o-mini',
      fake: () => openai,
      // `delta.tool_calls[].function.arguments` in 2,000 fragments, where 20 tokens were asked for.
      script: { kind: 'tools', calls: [{ id: 'call_endless', name: 'run_command', arguments: { command: 'y'.repeat(4_000) }, pieces: 2_000 }], usage: { input: 10, output: 2_000 } },
    },
    {
      provider: 'anthropic',
      model: 'anthropic/claude-sonnet-4-20250514',
      fake: () => anthropic,
      // `input_json_delta` in 2,000 fragments.
      script: { kind: 'tools', calls: [{ id: 'toolu_endless', name: 'run_command', arguments: { command: 'y'.repeat(4_000) }, pieces: 2_000 }], usage: { input: 10, output: 2_000 } },
    },
    {
      provider: 'ollama',
      model: 'ollama/llama3.2',
      fake: () => ollama,
      // Ollama sends calls whole: 500 of them, where 20 tokens were asked for.
      script: {
        kind: 'tools',
        calls: Array.from({ length: 500 }, (_, index) => ({ id: `c${index}`, name: 'run_command', arguments: { command: `echo ${index}` } })),
        usage: { input: 10, output: 5_000 },
      },
    },
  ];
  for (const { provider, model, fake, script } of endlessCalls) {
    it(`a provider that streams tool calls without end is cut off at the limit it was sent: the answer ends by its length, charged that (${provider})`, async () => {
      await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
      fake().enqueue(script);
      const streamed = await as('user', 'POST', '/api/message/stream', { message: 'call forever', newConversation: true, model, options: { maxTokens: 20 } });
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain('"finishReason":"length"');
      // Cut while the call was still streaming: no call was run, nor asked again with its result.
      expect(streamed.text).not.toContain('"type":"tool_call"');
      expect(fake().chatRequests()).toHaveLength(1);
      const stored = await as('user', 'GET', `/api/conversation/${conversationOf(streamed)}`);
      const answer = stored.body.messages.at(-1);
      expect(answer).toMatchObject({ role: 'assistant', finishReason: 'length' });
      expect(answer.toolCalls ?? []).toEqual([]);
      await svc.service.deps.usage.settled();
      const entries = await ledger();
      expect(entries).toHaveLength(1);
      // No count came: charged its worst case, which the arguments streamed fill up to the limit
      // (charged as if nothing had streamed, it would be 0).
      expect(entries[0]).toMatchObject({ provider, outcome: 'aborted', estimated: true, outputTokens: 20 });
    });

    it(`an honest tool call within the limit passes unchanged, charged what the provider counts (${provider})`, async () => {
      await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
      const args = { city: 'Paris', days: 3, units: 'metric' };
      // 19 fragments and the name: 20 pieces, the limit itself.
      fake().enqueue({ kind: 'tools', calls: [{ id: 'call_fair', name: 'forecast', arguments: args, pieces: 19 }], usage: { input: 10, output: 20 } });
      const tools = [{ type: 'function', function: { name: 'forecast', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
      const reply = await as('user', 'POST', '/v1/chat/completions', { model, max_tokens: 20, tools, messages: [{ role: 'user', content: 'weather?' }] });
      expect(reply.status, reply.text).toBe(200);
      const [choice] = reply.body.choices;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.tool_calls).toHaveLength(1);
      expect(choice.message.tool_calls[0].function.name).toBe('forecast');
      expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual(args);
      await svc.service.deps.usage.settled();
      expect(await ledger()).toMatchObject([{ provider, outcome: 'completed', estimated: false, outputTokens: 20 }]);
    });

    it(`a tool call from a provider that gives no count is charged what it streamed, not nothing (${provider})`, async () => {
      await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'day', tokens: 100_000 }] });
      const args = { command: 'z'.repeat(600) };
      // A whole answer of tool-call arguments, counted as nothing (zeros are no count).
      fake().enqueue({ kind: 'tools', calls: [{ id: 'call_free', name: 'forecast', arguments: args, pieces: 30 }], usage: { input: 0, output: 0 } });
      const tools = [{ type: 'function', function: { name: 'forecast', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];
      const reply = await as('user', 'POST', '/v1/chat/completions', { model, max_tokens: 1_000, tools, messages: [{ role: 'user', content: 'go' }] });
      expect(reply.status, reply.text).toBe(200);
      expect(reply.body.choices[0].finish_reason).toBe('tool_calls');
      await svc.service.deps.usage.settled();
      // Its worst case, as for a text answer without a count: a token a byte of the name and arguments.
      expect(await ledger()).toMatchObject([{ provider, outcome: 'completed', estimated: true, outputTokens: 'forecast'.length + JSON.stringify(args).length }]);
    });
  }

  it('a model that keeps calling tools in chat mode is checked before each round: a request quota is never overshot', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'minute', requests: 2 }] });
    const round = (id: string) => ({ kind: 'tools' as const, calls: [{ id, name: 'run_command', arguments: { command: 'true' } }] });
    ollama.enqueue(round('a'));
    ollama.enqueue(round('b'));
    ollama.enqueue(round('c'));
    const reply = await as('user', 'POST', '/api/message/stream', { message: 'loop', newConversation: true });
    expect(reply.status).toBe(200);
    expect(reply.text).toContain('RATE_LIMIT_EXCEEDED');
    expect(ollama.chatRequests()).toHaveLength(2);
    await svc.service.deps.usage.settled();
    expect(await ledger()).toHaveLength(2);
  });

  it('refused by two windows at once, Retry-After and resetAt name the one that lasts, not the minute', async () => {
    await putPolicy({ quotas: [{ subject: { userId: 'attack-user' }, window: 'minute', requests: 1 }, { subject: { userId: 'attack-user' }, window: 'day', requests: 1 }] });
    expect((await as('user', 'POST', '/api/message', { message: 'once', newConversation: true })).status).toBe(200);
    const refused = await as('user', 'POST', '/api/message', { message: 'again', newConversation: true });
    expectDayRefusal(refused);
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('another user’s usage and the policies stay out of a hostile User’s reach, on REST and /trpc', async () => {
    expectClean(await as('user', 'GET', '/api/usage?groupBy=user'), 403, 'FORBIDDEN');
    expectClean(await as('user', 'GET', '/api/usage?userId=attack-dude'), 403, 'FORBIDDEN');
    expectClean(await as('user', 'GET', '/api/usage?userId=%20attack-dude%20'), 403, 'FORBIDDEN');
    expectClean(await as('user', 'GET', '/api/usage?userId=attack-user&groupBy=user'), 403, 'FORBIDDEN');
    const trpc = await as('user', 'GET', `/trpc/usage.report?input=${encodeURIComponent(JSON.stringify({ json: { userId: 'attack-dude' } }))}`);
    expect(trpc.status, trpc.text).toBe(403);
    expect(trpc.text).not.toContain('stack');
    expect((await as('user', 'GET', '/api/usage?userId=attack-user')).status).toBe(200);
    for (const person of ['user', 'admin', 'lead'] as const) {
      expectClean(await as(person, 'PUT', '/api/policies', { quotas: [], modelAccess: [] }), 403, 'FORBIDDEN');
    }
    expectClean(await as('user', 'GET', '/api/policies'), 403, 'FORBIDDEN');
    // Admin holds audit:view: an injection-shaped id is a plain value, matching nobody.
    const injected = await as('admin', 'GET', `/api/usage?userId=${encodeURIComponent(`x' OR '1'='1`)}&groupBy=model`);
    expect(injected.status, injected.text).toBe(200);
    expect(injected.body.rows).toEqual([]);
  });

  it('bad /api/usage inputs and hostile policy documents are 400s with clean envelopes, never 500s', async () => {
    const bad = [
      'groupBy=user%27%3B--',
      'from=2026-02-31',
      'from=yesterday',
      'from=2026-01-02&to=2026-01-01',
      'from=2020-01-01&to=2026-01-01',
      // Year 0 is not a year PostgreSQL has.
      'from=0000-01-01&to=0000-06-01',
      'userId=',
      `userId=${'x'.repeat(201)}`,
    ];
    for (const query of bad) {
      const reply = await as('admin', 'GET', `/api/usage?${query}`);
      expect([200, 400], `${query}: ${reply.text}`).toContain(reply.status);
      if (reply.status === 400) expectClean(reply, 400, 'INVALID_REQUEST');
    }
    const documents: [string, unknown][] = [
      ['too many quotas', { quotas: Array.from({ length: 501 }, () => ({ subject: { role: 'User' }, window: 'day', tokens: 1 })) }],
      ['negative limit', { quotas: [{ subject: { role: 'User' }, window: 'day', tokens: -1 }] }],
      ['fractional tokens', { quotas: [{ subject: { role: 'User' }, window: 'day', tokens: 1.5 }] }],
      ['no metric', { quotas: [{ subject: { role: 'User' }, window: 'day' }] }],
      ['unknown role', { modelAccess: [{ role: 'Root', allow: ['*'] }] }],
      ['long pattern', { modelAccess: [{ role: 'User', allow: [`ollama/${'*'.repeat(300)}`] }] }],
      ['unknown provider', { modelAccess: [{ role: 'User', allow: ['mistral/*'] }] }],
      ['prototype key', JSON.parse('{"quotas":[],"modelAccess":[],"__proto__":{"polluted":true}}')],
      ['not an object', [1, 2, 3]],
    ];
    for (const [what, document] of documents) {
      const reply = await as('dude', 'PUT', '/api/policies', document);
      expect(reply.status, `${what}: ${reply.text}`).toBe(400);
      expectClean(reply, 400, 'INVALID_REQUEST');
    }
    expect((await as('dude', 'GET', '/api/policies')).body.policy).toEqual({ quotas: [], modelAccess: [] });
  });
});

describe.runIf(redisAvailable)('quotas held in Redis when Redis goes away', () => {
  let ollama: FakeOllama;
  let proxy: TcpProxy;
  let svc: TestService;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    const target = new URL(redisUrl);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    svc = await startTestService('sqlite', {
      REDIS_URL: `redis://${proxy.address}`,
      CLUSTER_SECRET: 'quota-attack-cluster-secret',
      REDIS_KEY_PREFIX: freshRedisPrefix(),
      OLLAMA_BASE_URL: ollama.url,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      QUOTA_LEASE_MS: '1000',
    });
  });
  afterAll(async () => {
    proxy.restore();
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), proxy[Symbol.asyncDispose]()]);
  });

  it('fails closed (503, no provider call) while Redis is down, and a call whose settle missed Redis is recorded once, not again as recovered', async () => {
    const stored = await svc.request('PUT', '/api/policies', { json: { quotas: [{ subject: { userId: 'local' }, window: 'day', requests: 10 }], modelAccess: [] } });
    expect(stored.status).toBe(200);
    // A call is admitted, then Redis goes away while it runs: its settle cannot release the lease.
    ollama.enqueue({ kind: 'text', chunks: ['slow', ' answer'], chunkDelayMs: 150, usage: { input: 7, output: 2 } });
    const running = svc.request('POST', '/api/message', { json: { message: 'while Redis goes' } });
    await ollama.waitForChatRequests(1);
    proxy.cut();
    expect((await running).status).toBe(200);
    await svc.service.deps.usage.settled();
    expect(await svc.service.deps.store.db.usageEntry.count()).toBe(1);

    const refused = await svc.request('POST', '/api/message', { json: { message: 'Redis is down' } });
    expectClean(refused, 503, 'SERVICE_UNAVAILABLE');
    expect(ollama.chatRequests()).toHaveLength(1);

    // Redis is back: the lease the settle could not release lapses and is swept, but the call is
    // already in the ledger, so it must not be recorded a second time.
    proxy.restore();
    await waitFor(async () => ((await svc.request('POST', '/api/message', { json: { message: 'back' } })).status === 200 ? true : undefined), 8000, 'Redis back');
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    await svc.service.deps.usage.settled();
    const entries = await svc.service.deps.store.db.usageEntry.findMany();
    expect(entries.map((entry) => entry.outcome).sort()).toEqual(['completed', 'completed']);
    const [limit] = (await svc.request('GET', '/api/usage/limits')).body.limits;
    expect(limit).toMatchObject({ used: 2 });

    // The Lua rule names the longest-lasting refusal too.
    const both = { quotas: [{ subject: { userId: 'local' }, window: 'minute', requests: 1 }, { subject: { userId: 'local' }, window: 'day', requests: 2 }], modelAccess: [] };
    expect((await svc.request('PUT', '/api/policies', { json: both })).status).toBe(200);
    expectDayRefusal(await svc.request('POST', '/api/message', { json: { message: 'over both' } }));
  });
});
