import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { openSse, typesOf } from '../helpers/sse.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// The SSE side of CONTRACT §6 on one provider (the provider matrix is chat-providers.test.ts):
// exact event sequences, ids, headers, resumable jobs, abort, the per-user cap, markdown lines.

const chunks = (count: number) => Array.from({ length: count }, (_, index) => `c${index} `);

describe('chat streams', () => {
  let fake: FakeOllama;
  let service: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, MAX_STREAMS_PER_USER: '2', SSE_PING_INTERVAL_MS: '100' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
  });

  async function storedMessages(conversationId: string) {
    const reply = await service.request('GET', `/api/conversation/${conversationId}`);
    return reply.body.messages as { role: string; content: string; finishReason?: string }[];
  }

  it('writes text events, context_update and exactly one done, with ids <streamId>:<seq> and the SSE headers', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Hel', 'lo', ' world'], usage: { input: 7, output: 3 } });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'Say hello', mode: 'chat' } });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-cache');
    expect(stream.headers.get('x-accel-buffering')).toBe('no');
    const streamId = stream.headers.get('x-stream-id');
    expect(streamId).toMatch(/^[0-9a-f-]{36}$/);
    const events = await stream.events();
    expect(typesOf(events)).toEqual(['text', 'text', 'text', 'context_update', 'done']);
    expect(events.map((event) => event.id)).toEqual([1, 2, 3, 4, 5].map((seq) => `${streamId}:${seq}`));
    expect(events.slice(0, 3).map((event) => event.data.content)).toEqual(['Hel', 'lo', ' world']);
    const done = events[4]?.data;
    expect(done.metadata).toMatchObject({
      provider: 'ollama',
      model: 'llama3.2',
      finishReason: 'stop',
      usage: { inputTokens: 7, outputTokens: 3 },
    });
    expect(done.metadata.durationMs).toBeGreaterThanOrEqual(0);
    expect(done.metadata.timeToFirstTokenMs).toBeGreaterThanOrEqual(0);
    const context = events[3]?.data.context;
    expect(context).toMatchObject({ conversationId: done.metadata.conversationId, messageCount: 2, title: 'Say hello' });
    const messages = await storedMessages(done.metadata.conversationId);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Hello world', finishReason: 'stop' });
    expect(messages.at(-2)).toMatchObject({ role: 'user', content: 'Say hello' });
  });

  it('keeps generating when the client leaves, and stores the whole answer', async () => {
    fake.enqueue({ kind: 'text', chunks: chunks(10), chunkDelayMs: 30 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'long one', mode: 'chat' } });
    const first = await stream.events((event) => event.data.type === 'text');
    expect(first).toHaveLength(1);
    await stream.cancel();
    const conversationId = (await service.request('GET', '/api/context')).body.conversationId as string;
    const stored = await waitFor(async () => {
      const last = (await storedMessages(conversationId)).at(-1);
      return last?.finishReason ? last : undefined;
    });
    expect(stored).toMatchObject({ role: 'assistant', content: chunks(10).join(''), finishReason: 'stop' });
  });

  it('replays after Last-Event-ID (or ?after) with no event lost or repeated, then follows live until done', async () => {
    fake.enqueue({ kind: 'text', chunks: chunks(8), chunkDelayMs: 40 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'resume me', mode: 'chat' } });
    const streamId = stream.headers.get('x-stream-id') ?? "";
    const seen = await stream.events((event) => event.id === `${streamId}:3`);
    await stream.cancel();
    const resumed = await openSse(`${service.url}/api/streams/${streamId}`, { headers: { 'Last-Event-ID': `${streamId}:3` } });
    expect(resumed.status).toBe(200);
    const rest = await resumed.events();
    const all = [...seen, ...rest];
    expect(all.map((event) => event.id)).toEqual(all.map((_, index) => `${streamId}:${index + 1}`));
    expect(typesOf(all)).toEqual([...Array<string>(8).fill('text'), 'context_update', 'done']);
    expect(all.filter((event) => event.data.type === 'text').map((event) => event.data.content).join('')).toBe(chunks(8).join(''));

    const fromQuery = await openSse(`${service.url}/api/streams/${streamId}?after=8`);
    expect(typesOf(await fromQuery.events())).toEqual(['context_update', 'done']);
  });

  it('aborts: the provider request is closed at once, the partial answer is stored as aborted, the stream ends with done', async () => {
    fake.reset();
    fake.enqueue({ kind: 'text', chunks: chunks(50), chunkDelayMs: 50 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'abort me', mode: 'chat' } });
    const streamId = stream.headers.get('x-stream-id') ?? "";
    await stream.events((event) => event.data.type === 'text');
    const abortedAt = performance.timeOrigin + performance.now();
    const abort = await service.request('POST', `/api/streams/${streamId}/abort`);
    expect(abort.status).toBe(200);
    expect(abort.body).toEqual({ success: true });
    const closed = await fake.waitForClientClose(0, 2000);
    expect((closed.closedAt ?? Infinity) - abortedAt).toBeLessThan(100);
    const rest = await stream.events();
    expect(typesOf(rest).slice(-2)).toEqual(['context_update', 'done']);
    const done = rest.at(-1)?.data;
    expect(done.metadata.finishReason).toBe('aborted');
    const last = (await storedMessages(done.metadata.conversationId)).at(-1);
    expect(last?.finishReason).toBe('aborted');
    expect(chunks(50).join('').startsWith(last?.content ?? 'missing')).toBe(true);
    expect(last?.content.length).toBeLessThan(chunks(50).join('').length);

    // After done, within STREAM_RETENTION_MS, abort is still a success; an unknown id is 404.
    expect((await service.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    const unknown = await service.request('POST', '/api/streams/00000000-0000-4000-8000-000000000000/abort');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await service.request('GET', '/api/streams/not-a-uuid')).status).toBe(404);
  });

  it('refuses a stream over MAX_STREAMS_PER_USER with 429 and details.cap, counting non-streaming requests too', async () => {
    fake.reset();
    fake.enqueue({ kind: 'text', chunks: chunks(20), chunkDelayMs: 25 }, { kind: 'text', chunks: chunks(20), chunkDelayMs: 25 });
    const first = await openSse(`${service.url}/api/message/stream`, { json: { message: 'one', mode: 'chat' } });
    const second = service.request('POST', '/api/message', { json: { message: 'two', mode: 'chat' } });
    await fake.waitForChatRequests(2);
    const third = await service.request('POST', '/api/message/stream', { json: { message: 'three', mode: 'chat' } });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { cap: 2 } });
    expect(typesOf(await first.events()).at(-1)).toBe('done');
    expect((await second).status).toBe(200);
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('sends : ping comments while a stream is quiet', async () => {
    fake.enqueue({ kind: 'text', chunks: ['a', 'b'], chunkDelayMs: 350 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'slow', mode: 'chat' } });
    await stream.events();
    expect(stream.comments).toContain('ping');
  });

  it('markdown streams carry text events that end on line boundaries (the last line flushed at the end)', async () => {
    for (const path of ['/api/message/stream/markdown', '/api/markdown/stream']) {
      fake.enqueue({ kind: 'text', chunks: ['# Ti', 'tle\nfirst ', 'line\n', '- a\n- ', 'b\nlast', ' words'] });
      const stream = await openSse(`${service.url}${path}`, { json: { message: 'markdown', mode: 'chat' } });
      const events = await stream.events();
      const texts = events.filter((event) => event.data.type === 'text').map((event) => event.data.content as string);
      expect(texts).toEqual(['# Title\n', 'first line\n', '- a\n', '- b\n', 'last words']);
      expect(typesOf(events).slice(-2)).toEqual(['context_update', 'done']);
    }
  });
});

describe('stream start', () => {
  // The default 15 s ping: nothing but the writer itself can send the headers early here.
  it('sends the 200 and the SSE headers once the provider answers, before its first chunk', async () => {
    await using fake = await startFakeOllama();
    await using service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
    // The provider answers 2xx and then says nothing: the client must still see the stream start.
    fake.enqueue({ kind: 'stallMidStream', chunks: ['late'], after: 0 });
    const opening = openSse(`${service.url}/api/message/stream`, { json: { message: 'Slow start', mode: 'chat' } });
    const stream = await Promise.race([
      opening,
      new Promise<never>((_, reject) => setTimeout(() => { reject(new Error('no headers within 2 s')); }, 2000)),
    ]);
    expect(stream.status).toBe(200);
    const streamId = stream.headers.get('x-stream-id') ?? '';
    expect((await service.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
    const events = await stream.events();
    expect(typesOf(events)).toEqual(['context_update', 'done']);
    expect(events[1]?.data.metadata.finishReason).toBe('aborted');
  });
});

describe('shutdown', () => {
  it('aborts running generations on stop, ends their streams with done, and stores them as aborted', async () => {
    await using fake = await startFakeOllama();
    const service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
    fake.enqueue({ kind: 'text', chunks: chunks(100), chunkDelayMs: 30 });
    const stream = await openSse(`${service.url}/api/message/stream`, { json: { message: 'until shutdown', mode: 'chat' } });
    await stream.events((event) => event.data.type === 'text');
    const stopping = service.stop();
    const rest = await stream.events();
    await stopping;
    expect(typesOf(rest).slice(-2)).toEqual(['context_update', 'done']);
    expect(rest.at(-1)?.data.metadata.finishReason).toBe('aborted');
    await using restarted = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url }, service.database);
    const conversationId = rest.at(-1)?.data.metadata.conversationId as string;
    const stored = await restarted.request('GET', `/api/conversation/${conversationId}`);
    expect(stored.body.messages.at(-1)).toMatchObject({ role: 'assistant', finishReason: 'aborted' });
    await service.database.drop();
  });
});
