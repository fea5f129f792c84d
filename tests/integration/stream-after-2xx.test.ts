import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider, type Script } from '../fakes/index.js';
import { typesOf, type SseEvent } from '../helpers/sse.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §6 and §12: once the provider has answered 2xx the reply is a stream, however soon the
// provider fails after it: `error`, `context_update`, `done` (OpenAI's chunks: the error object,
// then `data: [DONE]`), the partial answer stored with finishReason `error`. The failures here come
// as fast as a provider can make them: a TCP reset right after the 2xx headers, right after two
// chunks, and a malformed body right after the headers. Each case runs many times, ten at a time,
// so that a path that depends on which of "the 2xx arrived" and "the failure arrived" the service
// sees first, or on whether the stream finished before its reply was written, shows up. The
// service keeps finished streams for 0 ms, so a reply that looked its own stream up again after
// the generation ended would fail here too. A failure before the 2xx stays a JSON error.

const RUNS = 30;
const AT_ONCE = 10;

type ProviderName = 'ollama' | 'openai' | 'anthropic';
const models: Record<ProviderName, string> = { ollama: 'llama3.2', openai: 'gpt-4o-mini', anthropic: 'claude-sonnet-4-5' };
const callerKey = (provider: ProviderName) => (provider === 'ollama' ? undefined : `sk-caller-${provider}`);

interface StreamPath {
  label: string;
  path: (provider: ProviderName) => string;
  body: (provider: ProviderName, message: string) => Record<string, unknown>;
  openAI?: true;
}

const streamPaths: StreamPath[] = [
  { label: 'message stream', path: () => '/api/message/stream', body: (p, message) => ({ message, mode: 'chat', model: `${p}/${models[p]}` }) },
  { label: 'unified stream', path: () => '/api/unified/stream', body: (p, message) => ({ message, mode: 'chat', provider: p }) },
  { label: 'per-provider stream', path: (p) => `/api/${p}/stream`, body: (p, message) => ({ message, mode: 'chat', apiKey: callerKey(p) }) },
  {
    label: 'markdown stream',
    path: () => '/api/message/stream/markdown',
    body: (p, message) => ({ message, mode: 'chat', model: `${p}/${models[p]}` }),
  },
  {
    label: '/v1 stream',
    path: () => '/v1/chat/completions',
    body: (p, message) => ({ model: `${p}/${models[p]}`, stream: true, messages: [{ role: 'user', content: message }] }),
    openAI: true,
  },
];

const chunks = ['one ', 'two ', 'three'];
const failures: { label: string; script: Script }[] = [
  { label: '2xx then a reset at once', script: { kind: 'reset', chunks, after: 0 } },
  { label: 'two chunks then a reset at once', script: { kind: 'reset', chunks, after: 2 } },
  { label: '2xx then a malformed chunk', script: { kind: 'malformed', headersFirst: true } },
];

interface Reply {
  status: number;
  contentType: string;
  /** The SSE `data:` payloads as text, in order. */
  data: string[];
  conversationId: string | null;
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  const data = text
    .split('\n\n')
    .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)))
    .filter((line) => line !== '');
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    data: response.headers.get('content-type')?.startsWith('text/event-stream') ? data : [text],
    conversationId: response.headers.get('x-conversation-id'),
  };
}

/** Runs `attempt` RUNS times, AT_ONCE at a time. */
async function race<T>(attempt: (run: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < RUNS; start += AT_ONCE) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(AT_ONCE, RUNS - start) }, (_, offset) => attempt(start + offset)))));
  }
  return results;
}

/** What a reply streamed: its text in order and, for the contract's format, its events. */
function streamedText(reply: Reply, openAI: boolean): { text: string; events: SseEvent[] } {
  if (openAI) {
    const chunkTexts = reply.data
      .filter((data) => data !== '[DONE]')
      .map((data) => JSON.parse(data) as { choices?: { delta?: { content?: string } }[] })
      .map((chunk) => chunk.choices?.[0]?.delta?.content ?? '');
    return { text: chunkTexts.join(''), events: [] };
  }
  const events = reply.data.map((data) => ({ id: undefined, data: JSON.parse(data) }));
  const text = events
    .filter((event) => event.data.type === 'text')
    .map((event) => event.data.content as string)
    .join('');
  return { text, events };
}

describe('a stream after the provider’s 2xx, however soon it fails', () => {
  let fakes: Record<ProviderName, FakeProvider>;
  let svc: TestService;

  beforeAll(async () => {
    const [ollama, openai, anthropic] = await Promise.all([startFakeOllama(), startFakeOpenAI(), startFakeAnthropic()]);
    fakes = { ollama, openai, anthropic };
    svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_API_KEY: 'sk-server-openai',
      ANTHROPIC_API_KEY: 'sk-server-anthropic',
      MAX_STREAMS_PER_USER: '1000',
      STREAM_RETENTION_MS: '0',
      PROVIDER_TIMEOUT_MS: '5000',
    });
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all(Object.values(fakes).map((fake) => fake.close()));
  });

  async function storedAnswer(conversationId: string, messageId?: string): Promise<{ content: string; finishReason?: string }> {
    const reply = await svc.request('GET', `/api/conversation/${conversationId}`);
    expect(reply.status).toBe(200);
    const messages = reply.body.messages as { id: string; role: string; content: string; finishReason?: string }[];
    const answer = messageId === undefined ? messages.at(-1) : messages.find((message) => message.id === messageId);
    expect(answer?.role).toBe('assistant');
    return answer as { content: string; finishReason?: string };
  }

  for (const provider of ['ollama', 'openai', 'anthropic'] as const) {
    for (const failure of failures) {
      for (const route of streamPaths) {
        it(`${provider}, ${route.label}: ${failure.label} → 200 event stream ending in the error, ${RUNS} times`, async () => {
          const fake = fakes[provider];
          fake.setDefault(failure.script);
          const key = callerKey(provider);
          const headers: Record<string, string> = route.openAI && key !== undefined ? { 'x-provider-api-key': key } : {};
          try {
            expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
            const replies = await race((run) =>
              post(`${svc.url}${route.path(provider)}`, route.body(provider, `${provider} ${failure.label} ${route.label} ${run}`), headers),
            );
            for (const reply of replies) {
              expect(reply.status, reply.data.join('\n')).toBe(200);
              expect(reply.contentType).toMatch(/^text\/event-stream/);
              const { text, events } = streamedText(reply, route.openAI === true);
              // What arrived before the reset, if anything: never more than the provider sent.
              expect('one two '.startsWith(text)).toBe(true);
              if (route.openAI) {
                // OpenAI's in-stream failure: its error object as a data line (its SDKs raise it), then [DONE].
                expect(reply.data.at(-1)).toBe('[DONE]');
                const error = JSON.parse(reply.data.at(-2) ?? '{}') as { error?: { code?: string; message?: string } };
                expect(error.error).toMatchObject({ code: 'model_unavailable', message: expect.any(String) });
                expect(reply.conversationId).toEqual(expect.any(String));
                const stored = await storedAnswer(reply.conversationId ?? '');
                expect(stored).toMatchObject({ content: text, finishReason: 'error' });
                continue;
              }
              const types = typesOf(events);
              expect(types.slice(-3)).toEqual(['error', 'context_update', 'done']);
              expect(types.slice(0, -3).every((type) => type === 'text')).toBe(true);
              expect(events.at(-3)?.data).toMatchObject({ type: 'error', code: 'MODEL_UNAVAILABLE' });
              const done = events.at(-1)?.data;
              expect(done.metadata).toMatchObject({ provider, finishReason: 'error' });
              const stored = await storedAnswer(done.metadata.conversationId as string, done.metadata.messageId as string);
              expect(stored).toMatchObject({ content: text, finishReason: 'error' });
            }
          } finally {
            fake.setDefault({ kind: 'text', chunks: ['Hello', ' from', ' fake'] });
          }
        });
      }
    }

    it(`${provider}: a failure before the 2xx (refused, 503) stays a JSON error on every stream path`, async () => {
      const fake = fakes[provider];
      const key = callerKey(provider);
      for (const route of streamPaths) {
        for (const script of [{ kind: 'refuse' }, { kind: 'fail', status: 503 }] as const) {
          fake.enqueue(script);
          const headers: Record<string, string> = route.openAI && key !== undefined ? { 'x-provider-api-key': key } : {};
          const reply = await post(`${svc.url}${route.path(provider)}`, route.body(provider, `${provider} ${script.kind} ${route.label}`), headers);
          expect(reply.status, `${route.label} ${script.kind}`).toBe(503);
          expect(reply.contentType).toMatch(/^application\/json/);
          const body = JSON.parse(reply.data[0] ?? '{}') as { error?: { code?: string } };
          expect(body.error?.code).toBe(route.openAI ? 'model_unavailable' : 'MODEL_UNAVAILABLE');
        }
      }
    });
  }
});
