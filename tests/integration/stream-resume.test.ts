import { fetchEventSource, type EventSourceMessage } from '@microsoft/fetch-event-source';
import { EventSource } from 'eventsource';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { postgresAvailable } from '../helpers/databases.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';
import { openSse, type SseEvent } from '../helpers/sse.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// CONTRACT §12: a streaming chat POST that comes back with Last-Event-ID (fetch-event-source's
// retry after a network drop) resumes the stream it names: no second generation, nothing stored
// twice, no text shown twice. A GET of a finished stream past its `done` is 204, so an
// EventSource stops. /v1 has no resume: an OpenAI client that closes its stream cancels it.

/** fetch-event-source is written for browsers: it reads `document` and `window` timers. */
function browserGlobals(): () => void {
  const scope = globalThis as Record<string, unknown>;
  const saved = { window: scope.window, document: scope.document };
  scope.window = globalThis;
  scope.document = { hidden: false, addEventListener: () => undefined, removeEventListener: () => undefined };
  return () => {
    scope.window = saved.window;
    scope.document = saved.document;
  };
}

class RefusedOpen extends Error {}

const chunks = Array.from({ length: 24 }, (_, i) => `w${i} `);
const fullText = chunks.join('');

describe('resuming streams with the clients that do it', () => {
  let ollama: FakeOllama;
  let service: TestService;
  let restoreGlobals: () => void;

  beforeAll(async () => {
    restoreGlobals = browserGlobals();
    ollama = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url, AI_MODEL_PROVIDER: 'ollama', AI_MODEL_NAME: 'llama3.2' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await ollama.close();
    restoreGlobals();
  });
  beforeEach(() => {
    ollama.reset();
  });

  const messagesOf = async (conversationId: string) =>
    (await service.request('GET', `/api/conversation/${conversationId}`)).body.messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);

  it('fetch-event-source: a network drop mid-stream resumes on the same POST with no text twice and one stored answer', async () => {
    ollama.enqueue({ kind: 'text', chunks, chunkDelayMs: 40 });
    const port = new URL(service.url).port;
    await using proxy = await startTcpProxy('127.0.0.1', Number(port));
    const sent: { lastEventId: string | null }[] = [];
    const statuses: number[] = [];
    const events: EventSourceMessage[] = [];
    let dropped = false;
    await fetchEventSource(`http://${proxy.address}/api/message/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'a long answer, please', mode: 'chat' }),
      openWhenHidden: true,
      fetch: (input, init) => {
        sent.push({ lastEventId: new Headers(init?.headers).get('last-event-id') });
        return fetch(input, init);
      },
      onopen: async (response) => {
        statuses.push(response.status);
        if (!response.headers.get('content-type')?.startsWith('text/event-stream')) throw new RefusedOpen(await response.text());
      },
      onmessage: (message) => {
        events.push(message);
        const texts = events.filter((event) => JSON.parse(event.data).type === 'text').length;
        if (texts === 6 && !dropped) {
          // The network goes away under the client (and the service): every socket reset at once.
          dropped = true;
          proxy.cut();
          proxy.restore();
        }
      },
      onerror: (error) => {
        if (error instanceof RefusedOpen) throw error;
        return 50;
      },
    });
    expect(dropped).toBe(true);
    expect(statuses).toEqual([200, 200]);
    expect(sent[0]?.lastEventId).toBeNull();
    expect(sent[1]?.lastEventId).toMatch(/^[0-9a-f-]{36}:\d+$/);
    const data = events.map((event) => JSON.parse(event.data));
    expect(data.filter((event) => event.type === 'text').map((event) => event.content).join('')).toBe(fullText);
    expect(data.filter((event) => event.type === 'done')).toHaveLength(1);
    // Every event once, in order.
    const ids = events.map((event) => Number(event.id.split(':')[1]));
    expect(ids).toEqual(ids.map((_, index) => index + 1));
    expect(ollama.chatRequests()).toHaveLength(1);
    const done = data.at(-1);
    expect(await messagesOf(done.metadata.conversationId)).toEqual(['user: a long answer, please', `assistant: ${fullText}`]);
  });

  it('a POST with Last-Event-ID replays after it and follows live, starting nothing; an id that names no stream of the caller → 404', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['one ', 'two ', 'three'], chunkDelayMs: 50 });
    const body = { message: 'resume me', mode: 'chat' };
    const started = await openSse(`${service.url}/api/message/stream`, { json: body });
    const streamId = started.headers.get('x-stream-id') ?? '';
    await started.events((event) => event.id === `${streamId}:1`);
    await started.cancel();
    const resumed = await openSse(`${service.url}/api/message/stream`, { json: body, headers: { 'Last-Event-ID': `${streamId}:1` } });
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-stream-id')).toBe(streamId);
    const rest = await resumed.events();
    expect(rest[0]?.id).toBe(`${streamId}:2`);
    expect(rest.filter((event) => event.data.type === 'text').map((event) => event.data.content).join('')).toBe('two three');
    expect(ollama.chatRequests()).toHaveLength(1);

    // The same on the markdown, unified and per-provider streaming paths.
    for (const [path, json] of [
      ['/api/message/stream/markdown', body],
      ['/api/unified/stream', { ...body, provider: 'ollama' }],
      ['/api/ollama/stream', body],
    ] as const) {
      const again = await openSse(`${service.url}${path}`, { json, headers: { 'Last-Event-ID': `${streamId}:4` } });
      expect(again.status, path).toBe(200);
      const expected = rest.filter((event) => Number(event.id?.split(':')[1]) > 4).map((event) => event.id);
      expect((await again.events()).map((event) => event.id)).toEqual(expected);
    }
    for (const lastEventId of [`${crypto.randomUUID()}:3`, 'not-a-stream:1', streamId, `${streamId}:x`]) {
      const refused = await service.request('POST', '/api/message/stream', { json: body, headers: { 'Last-Event-ID': lastEventId } });
      expectEnvelope(refused, 404, 'NOT_FOUND');
    }
    expect(ollama.chatRequests()).toHaveLength(1);
  });

  it('GET /api/streams/:id at or past its done is 204; before it, the events that are left', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['short'] });
    const started = await openSse(`${service.url}/api/message/stream`, { json: { message: 'finish quickly', mode: 'chat' } });
    const events = await started.events();
    const streamId = started.headers.get('x-stream-id') ?? '';
    const doneSeq = Number(events.at(-1)?.id?.split(':')[1]);
    expect(events.at(-1)?.data.type).toBe('done');
    for (const [query, headers] of [
      [`?after=${doneSeq}`, {}],
      [`?after=${doneSeq + 5}`, {}],
      ['', { 'Last-Event-ID': `${streamId}:${doneSeq}` }],
    ] as const) {
      const reply = await fetch(`${service.url}/api/streams/${streamId}${query}`, { headers });
      expect(reply.status, query || 'Last-Event-ID').toBe(204);
      expect(await reply.text()).toBe('');
    }
    const last = await openSse(`${service.url}/api/streams/${streamId}?after=${doneSeq - 1}`);
    expect(last.status).toBe(200);
    expect((await last.events()).map((event: SseEvent) => event.data.type)).toEqual(['done']);
  });

  it('eventsource: after done the client reconnects once, gets 204 and stops', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['all ', 'of ', 'it'] });
    const started = await openSse(`${service.url}/api/message/stream`, { json: { message: 'watch me', mode: 'chat' } });
    const streamId = started.headers.get('x-stream-id') ?? '';
    await started.events();
    const statuses: number[] = [];
    const received: string[] = [];
    const source = new EventSource(`${service.url}/api/streams/${streamId}`, {
      fetch: async (input, init) => {
        const reply = await fetch(input, init);
        statuses.push(reply.status);
        return reply;
      },
    });
    try {
      source.onmessage = (message) => {
        received.push(JSON.parse(message.data).type);
      };
      await waitFor(() => (source.readyState === EventSource.CLOSED ? true : undefined), 8000, 'the EventSource to stop');
      expect(received.at(-1)).toBe('done');
      expect(statuses).toEqual([200, 204]);
      // And it stays stopped.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(statuses).toEqual([200, 204]);
    } finally {
      source.close();
    }
  });

  it('/v1: an openai SDK stream aborted by its caller closes the provider request and is stored as aborted', async () => {
    ollama.enqueue({ kind: 'text', chunks, chunkDelayMs: 60 });
    const client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'unused-for-ollama', maxRetries: 0 });
    const controller = new AbortController();
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'cancel me' }], stream: true }, { signal: controller.signal })
      .withResponse();
    let text = '';
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (text.length > 0) controller.abort();
      }
    } catch (error) {
      expect((error as Error).name).toMatch(/Abort/);
    }
    const upstream = await ollama.waitForClientClose(0, 5000);
    expect(upstream.closedAt).toBeDefined();
    const conversationId = response.headers.get('x-conversation-id') ?? '';
    const answer = await waitFor(async () => {
      const stored = await service.request('GET', `/api/conversation/${conversationId}`);
      const last = stored.body.messages.at(-1);
      return last?.role === 'assistant' && last.finishReason !== undefined ? last : undefined;
    });
    expect(answer.finishReason).toBe('aborted');
    expect(answer.content.length).toBeLessThan(fullText.length);
  });
});

describe('short retention', () => {
  let ollama: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    ollama = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: ollama.url, STREAM_RETENTION_MS: '300' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await ollama.close();
  });

  it('an expired stream cannot be resumed (404), and its Idempotency-Key runs again once the retention has passed', async () => {
    const options = { json: { message: 'brief', mode: 'chat' }, headers: { 'Idempotency-Key': 'short-lived-key' } };
    const started = await openSse(`${service.url}/api/message/stream`, options);
    const events = await started.events();
    const streamId = started.headers.get('x-stream-id') ?? '';
    const repeat = await openSse(`${service.url}/api/message/stream`, options);
    expect(repeat.headers.get('x-stream-id')).toBe(streamId);
    await repeat.events();
    expect(ollama.chatRequests()).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expectEnvelope(
      await service.request('POST', '/api/message/stream', { json: options.json, headers: { 'Last-Event-ID': events.at(-2)?.id ?? '' } }),
      404,
      'NOT_FOUND',
    );
    const fresh = await openSse(`${service.url}/api/message/stream`, options);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('x-stream-id')).not.toBe(streamId);
    await fresh.events();
    expect(ollama.chatRequests()).toHaveLength(2);
  });
});

describe.runIf(redisAvailable && postgresAvailable)('resuming on the other instance (PostgreSQL + Redis)', () => {
  let ollama: FakeOllama;
  let first: TestService;
  let second: TestService;

  beforeAll(async () => {
    ollama = await startFakeOllama();
    const env = { REDIS_URL: redisUrl, CLUSTER_SECRET: 'stream-resume-test-cluster-secret', REDIS_KEY_PREFIX: freshRedisPrefix(), OLLAMA_BASE_URL: ollama.url };
    first = await startTestService('postgresql', env);
    second = await startTestService('postgresql', env, first.database);
  });
  afterAll(async () => {
    await second.stop();
    await first[Symbol.asyncDispose]();
    await ollama.close();
  });

  it('a POST with Last-Event-ID reaching the other instance resumes there; its finished stream read past done is 204 there', async () => {
    ollama.enqueue({ kind: 'text', chunks: ['a ', 'b ', 'c ', 'd'], chunkDelayMs: 80 });
    const body = { message: 'cross resume', mode: 'chat' };
    const started = await openSse(`${first.url}/api/message/stream`, { json: body });
    const streamId = started.headers.get('x-stream-id') ?? '';
    await started.events((event) => event.id === `${streamId}:2`);
    await started.cancel();
    const resumed = await openSse(`${second.url}/api/message/stream`, { json: body, headers: { 'Last-Event-ID': `${streamId}:2` } });
    expect(resumed.status).toBe(200);
    const rest = await resumed.events();
    expect(rest[0]?.id).toBe(`${streamId}:3`);
    expect(rest.at(-1)?.data.type).toBe('done');
    expect(ollama.chatRequests()).toHaveLength(1);
    const doneSeq = Number(rest.at(-1)?.id?.split(':')[1]);
    expect((await fetch(`${second.url}/api/streams/${streamId}`, { headers: { 'Last-Event-ID': `${streamId}:${doneSeq}` } })).status).toBe(204);
  });
});
