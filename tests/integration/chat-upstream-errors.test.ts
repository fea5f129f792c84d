import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropicError, openAIError, startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider, type Script } from '../fakes/index.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { openSse, typesOf, type SseEvent } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestResponse, type TestService } from '../helpers/test-service.js';

// CONTRACT §2 and §6 for a provider that fails: before the stream's headers every failure is an
// ordinary JSON error envelope (on the streaming and the non-streaming paths alike); once the
// provider has answered 2xx a failure ends the stream with error, context_update, done, and the
// partial answer is stored as `error`. The caller's API key never comes back in any reply.

interface StoredMessage {
  role: string;
  content: string;
  finishReason?: string;
}

interface ProviderCase {
  name: 'ollama' | 'openai' | 'anthropic';
  fake: () => FakeProvider;
  messagePath: string;
  streamPath: string;
  body: (message: string) => Record<string, unknown>;
  /** How this provider is made to answer 404 for an unknown model: a model it lacks, or a scripted 404. */
  unknownModel: () => { script?: Script; model?: string };
}

/** Before any 2xx: the status and code each upstream failure maps to (CONTRACT §2). */
const beforeHeaders: { label: string; script: Script; status: number; code: string }[] = [
  { label: 'provider 401 (key rejected)', script: { kind: 'fail', status: 401 }, status: 400, code: 'INVALID_REQUEST' },
  { label: 'provider 429', script: { kind: 'fail', status: 429 }, status: 429, code: 'RATE_LIMIT_EXCEEDED' },
  { label: 'provider 500', script: { kind: 'fail', status: 500 }, status: 503, code: 'MODEL_UNAVAILABLE' },
  { label: 'provider 503', script: { kind: 'fail', status: 503 }, status: 503, code: 'MODEL_UNAVAILABLE' },
  { label: 'connection refused', script: { kind: 'refuse' }, status: 503, code: 'MODEL_UNAVAILABLE' },
];

function expectNoSse(response: { headers: Headers }) {
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-stream-id')).toBeNull();
}

const serverKey = 'sk-server-CANARY9876543210zyxwvu';

describe('chat upstream errors', () => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let svc: TestService;

  beforeAll(async () => {
    [ollama, openai, anthropic] = await Promise.all([startFakeOllama(), startFakeOpenAI(), startFakeAnthropic()]);
    svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: serverKey,
      PROVIDER_TIMEOUT_MS: '300',
      RATE_LIMIT_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close()]);
  });
  beforeEach(async () => {
    ollama.reset();
    openai.reset();
    anthropic.reset();
    // Each test in a conversation of its own, so "the last stored message" is this test's.
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
  });

  const providers: ProviderCase[] = [
    {
      name: 'ollama',
      fake: () => ollama,
      messagePath: '/api/message',
      streamPath: '/api/message/stream',
      body: (message) => ({ message, mode: 'chat' }),
      // Ollama answers 404 for a model it does not have.
      unknownModel: () => ({ model: 'no-such-model' }),
    },
    {
      name: 'openai',
      fake: () => openai,
      messagePath: '/api/unified/message',
      streamPath: '/api/unified/stream',
      body: (message) => ({ message, mode: 'chat', provider: 'openai', apiKey: 'sk-test' }),
      unknownModel: () => ({ script: { kind: 'fail', status: 404, body: openAIError(404, { message: "The model 'nope' does not exist", code: 'model_not_found' }) } }),
    },
    {
      name: 'anthropic',
      fake: () => anthropic,
      messagePath: '/api/anthropic/message',
      streamPath: '/api/anthropic/stream',
      body: (message) => ({ message, mode: 'chat', apiKey: 'sk-ant-test' }),
      unknownModel: () => ({ script: { kind: 'fail', status: 404, body: anthropicError(404, 'model: nope') } }),
    },
  ];

  async function currentMessages(): Promise<{ conversationId: string; messages: StoredMessage[] }> {
    const conversationId = (await svc.request('GET', '/api/context')).body.conversationId as string;
    const reply = await svc.request('GET', `/api/conversation/${conversationId}`);
    expect(reply.status).toBe(200);
    return { conversationId, messages: reply.body.messages as StoredMessage[] };
  }

  async function storedMessages(conversationId: string): Promise<StoredMessage[]> {
    const reply = await svc.request('GET', `/api/conversation/${conversationId}`);
    expect(reply.status).toBe(200);
    return reply.body.messages as StoredMessage[];
  }

  /** The provider failed before answering: the user message is stored and nothing after it. */
  async function expectOnlyUserMessageStored(message: string) {
    const { messages } = await currentMessages();
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: message });
    expect(messages.filter((stored) => stored.content === message)).toHaveLength(1);
  }

  /** The next request on the same service is answered normally. */
  async function expectHealthy(provider: ProviderCase) {
    provider.fake().enqueue({ kind: 'text', chunks: ['still', ' fine'] });
    const reply = await svc.request('POST', provider.messagePath, { json: provider.body('are you there?') });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, response: 'still fine', provider: provider.name });
  }

  for (const provider of providers) {
    describe(`on ${provider.name}`, () => {
      for (const failure of beforeHeaders) {
        it(`${failure.label} → ${failure.status} ${failure.code} as a JSON envelope on the message and stream paths`, async () => {
          const fake = provider.fake();
          const plainText = `${provider.name} ${failure.label} plain`;
          fake.enqueue(failure.script);
          const plain = await svc.request('POST', provider.messagePath, { json: provider.body(plainText) });
          expectEnvelope(plain, failure.status, failure.code);
          expectNoSse(plain);
          expect(plain.body.error.details).toMatchObject({ provider: provider.name });
          await expectOnlyUserMessageStored(plainText);

          const streamText = `${provider.name} ${failure.label} stream`;
          fake.enqueue(failure.script);
          const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(streamText) });
          expect(stream.status).toBe(failure.status);
          expectNoSse(stream);
          expect(stream.json).toMatchObject({ success: false, error: { code: failure.code, details: { provider: provider.name } } });
          await expectOnlyUserMessageStored(streamText);

          expect(fake.chatRequests()).toHaveLength(2);
          await expectHealthy(provider);
        });
      }

      it('an unknown model (provider 404) → 400 INVALID_REQUEST on both paths', async () => {
        const fake = provider.fake();
        const { script, model } = provider.unknownModel();
        const withModel = (message: string) => ({ ...provider.body(message), ...(model === undefined ? {} : { model }) });
        if (script) fake.enqueue(script);
        const plain = await svc.request('POST', provider.messagePath, { json: withModel(`${provider.name}: which model?`) });
        const error = expectEnvelope(plain, 400, 'INVALID_REQUEST');
        expect(error.details).toMatchObject({ provider: provider.name, status: 404 });
        if (script) fake.enqueue(script);
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: withModel(`${provider.name}: which model, streamed?`) });
        expect(stream.status).toBe(400);
        expectNoSse(stream);
        expect(stream.json.error).toMatchObject({ code: 'INVALID_REQUEST', details: { provider: provider.name, status: 404 } });
        await expectOnlyUserMessageStored(`${provider.name}: which model, streamed?`);
        await expectHealthy(provider);
      });

      it("passes on the provider's Retry-After with a 429", async () => {
        provider.fake().enqueue({ kind: 'fail', status: 429, headers: { 'retry-after': '7' } });
        const plain = await svc.request('POST', provider.messagePath, { json: provider.body('slow down') });
        expectEnvelope(plain, 429, 'RATE_LIMIT_EXCEEDED');
        expect(plain.headers.get('retry-after')).toBe('7');
      });

      it('a provider that never answers → 503 MODEL_UNAVAILABLE after PROVIDER_TIMEOUT_MS, on both paths', async () => {
        const fake = provider.fake();
        fake.enqueue({ kind: 'stall' });
        const started = performance.now();
        const plain = await svc.request('POST', provider.messagePath, { json: provider.body(`${provider.name}: hello? plain`) });
        const elapsed = performance.now() - started;
        const error = expectEnvelope(plain, 503, 'MODEL_UNAVAILABLE');
        expect(error.details).toMatchObject({ provider: provider.name, reason: 'timeout' });
        expect(elapsed).toBeGreaterThanOrEqual(250);
        expect(elapsed).toBeLessThan(5000);
        // The stalled request was given up, not left open.
        await fake.waitForClientClose(0, 2000);

        fake.enqueue({ kind: 'stall' });
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${provider.name}: hello? stream`) });
        expect(stream.status).toBe(503);
        expectNoSse(stream);
        expect(stream.json.error).toMatchObject({ code: 'MODEL_UNAVAILABLE', details: { reason: 'timeout' } });
        await expectOnlyUserMessageStored(`${provider.name}: hello? stream`);
        await expectHealthy(provider);
      });

      describe('a failure during the stream', () => {
        const duringStream: { label: string; script: Script; texts: string[] }[] = [
          { label: 'connection cut after 2 chunks', script: { kind: 'cut', chunks: ['one ', 'two ', 'three'], after: 2 }, texts: ['one ', 'two '] },
          { label: 'malformed body', script: { kind: 'malformed' }, texts: [] },
          { label: "the provider's own error event after 1 chunk", script: { kind: 'streamError', chunks: ['one ', 'two '], after: 1 }, texts: ['one '] },
          { label: 'silence past PROVIDER_TIMEOUT_MS after 1 chunk', script: { kind: 'stallMidStream', chunks: ['one ', 'two '], after: 1 }, texts: ['one '] },
        ];
        for (const failure of duringStream) {
          it(`${failure.label}: error, context_update, done(error); the partial answer stored as error`, async () => {
            const fake = provider.fake();
            fake.enqueue(failure.script);
            const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${failure.label} streamed`) });
            expect(stream.status).toBe(200);
            expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
            const events = await stream.events();
            const textTypes = failure.texts.map(() => 'text');
            const texts = events.filter((event) => event.data.type === 'text').map((event) => event.data.content as string);
            expect(texts).toEqual(failure.texts);
            expect(typesOf(events)).toEqual([...textTypes, 'error', 'context_update', 'done']);
            const error = events.find((event) => event.data.type === 'error')?.data;
            expect(Object.keys(error).sort()).toEqual(['code', 'message', 'type']);
            expect(error.code).toBe('MODEL_UNAVAILABLE');
            expect(error.message).toEqual(expect.any(String));
            const done = events.at(-1)?.data;
            expect(done.metadata).toMatchObject({ provider: provider.name, finishReason: 'error' });
            expect(events.filter((event: SseEvent) => event.data.type === 'done')).toHaveLength(1);
            const context = events.at(-2)?.data.context;
            expect(context.conversationId).toBe(done.metadata.conversationId);

            const messages = await storedMessages(done.metadata.conversationId);
            expect(messages.at(-2)).toMatchObject({ role: 'user', content: `${failure.label} streamed` });
            expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: failure.texts.join(''), finishReason: 'error' });
            expect(context.messageCount).toBe(messages.filter((message) => message.role === 'user' || message.role === 'assistant').length);

            // The non-streaming path runs the same engine: the mapped envelope, the partial stored as error.
            fake.enqueue(failure.script);
            const plain = await svc.request('POST', provider.messagePath, { json: provider.body(`${failure.label} plain`) });
            expectEnvelope(plain, 503, 'MODEL_UNAVAILABLE');
            const after = (await currentMessages()).messages;
            expect(after.at(-2)).toMatchObject({ role: 'user', content: `${failure.label} plain` });
            expect(after.at(-1)).toMatchObject({ role: 'assistant', content: failure.texts.join(''), finishReason: 'error' });
            await expectHealthy(provider);
          });
        }
      });
    });
  }

  describe("the caller's API key", () => {
    const key = 'sk-proj-LEAKCANARY0123456789abcdefXYZ';
    const fragments = [key, key.slice(3, 20), key.slice(-12)];
    const body = (message: string) => ({ message, mode: 'chat', provider: 'openai', apiKey: key });
    // Real providers quote (part of) a rejected key back; the fake is told to quote all of it.
    const quoting: Script = { kind: 'fail', status: 401, body: openAIError(401, { message: `Incorrect API key provided: ${key}. Find your key at …` }) };

    function expectNoKey(text: string) {
      for (const fragment of fragments) expect(text).not.toContain(fragment);
    }

    it('is sent upstream but never appears in an error reply, on the message and stream paths', async () => {
      openai.enqueue(quoting);
      const plain: TestResponse = await svc.request('POST', '/api/unified/message', { json: body('key check plain') });
      expectEnvelope(plain, 400, 'INVALID_REQUEST');
      expectNoKey(plain.text);
      expect(openai.chatRequests()[0]?.headers.authorization).toBe(`Bearer ${key}`);

      openai.enqueue(quoting);
      const stream = await openSse(`${svc.url}/api/unified/stream`, { json: body('key check stream') });
      expect(stream.status).toBe(400);
      expectNoKey(JSON.stringify(stream.json));

      // A failure inside the stream whose upstream text names the key.
      openai.enqueue({ kind: 'cut', chunks: [`your key ${key.slice(0, 4)}`, ' is', ' fine'], after: 1 });
      const cut = await openSse(`${svc.url}/api/unified/stream`, { json: body('key check cut') });
      const events = await cut.events();
      expect(typesOf(events).slice(-3)).toEqual(['error', 'context_update', 'done']);
      expectNoKey(JSON.stringify(events));

      const conversationId = events.at(-1)?.data.metadata.conversationId as string;
      const stored = await svc.request('GET', `/api/conversation/${conversationId}`);
      expectNoKey(stored.text);
      expectNoKey((await svc.request('GET', '/api/context')).text);
    });

    it('a successful answer does not echo or store it either', async () => {
      openai.enqueue({ kind: 'text', chunks: ['ok'] });
      const reply = await svc.request('POST', '/api/unified/message', { json: body('key check ok') });
      expect(reply.status).toBe(200);
      expect(reply.body.response).toBe('ok');
      expectNoKey(reply.text);
      const stored = await svc.request('GET', `/api/conversation/${reply.body.conversationId as string}`);
      expect(stored.body.metadata).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
      expectNoKey(stored.text);
      expectNoKey((await svc.request('GET', '/api/conversations')).text);
    });

    it("nor does the server's own key, used when the caller sends none", async () => {
      openai.enqueue({ kind: 'fail', status: 401, body: openAIError(401, { message: `Incorrect API key provided: ${serverKey}.` }) }, { kind: 'text', chunks: ['ok'] });
      const refused = await svc.request('POST', '/api/unified/message', { json: { message: 'server key refused', mode: 'chat', provider: 'openai' } });
      expectEnvelope(refused, 400, 'INVALID_REQUEST');
      const answered = await svc.request('POST', '/api/unified/message', { json: { message: 'server key ok', mode: 'chat', provider: 'openai' } });
      expect(answered.status).toBe(200);
      expect(openai.chatRequests().map((request) => request.headers.authorization)).toEqual([`Bearer ${serverKey}`, `Bearer ${serverKey}`]);
      const stored = await svc.request('GET', `/api/conversation/${answered.body.conversationId as string}`);
      for (const text of [refused.text, answered.text, stored.text]) {
        expect(text).not.toContain(serverKey);
        expect(text).not.toContain(serverKey.slice(-12));
      }
    });
  });
});

describe('chat with a provider base URL on a closed port', () => {
  let svc: TestService;

  beforeAll(async () => {
    const origin = await closedOrigin();
    svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: origin,
      OPENAI_BASE_URL: `${origin}/v1`,
      RATE_LIMIT_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  for (const [path, body] of [
    ['/api/message', { message: 'anyone home?', mode: 'chat' }],
    ['/api/message/stream', { message: 'anyone home, streamed?', mode: 'chat' }],
    ['/api/unified/message', { message: 'openai home?', mode: 'chat', provider: 'openai', apiKey: 'sk-test' }],
    ['/api/unified/stream', { message: 'openai home, streamed?', mode: 'chat', provider: 'openai', apiKey: 'sk-test' }],
  ] as const) {
    it(`${path} → 503 MODEL_UNAVAILABLE (unreachable) as JSON, the user message stored`, async () => {
      const stream = await openSse(`${svc.url}${path}`, { json: body });
      expect(stream.status).toBe(503);
      expectNoSse(stream);
      expect(stream.json).toMatchObject({
        success: false,
        error: { code: 'MODEL_UNAVAILABLE', details: { provider: 'provider' in body ? 'openai' : 'ollama', reason: 'unreachable' } },
      });
      const conversationId = (await svc.request('GET', '/api/context')).body.conversationId as string;
      const messages = (await svc.request('GET', `/api/conversation/${conversationId}`)).body.messages as StoredMessage[];
      expect(messages.at(-1)).toMatchObject({ role: 'user', content: body.message });
    });
  }
});
