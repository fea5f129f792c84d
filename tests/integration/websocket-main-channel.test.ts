import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, connect, wsUrl, type Frame } from '../helpers/ws-client.js';
import { waitFor } from '../helpers/wait-for.js';

// `/ws` and `/ws/markdown-stream` (CONTRACT §8) with the real `ws` client: chat through the same
// engine as SSE, abort, bad frames answered without closing, protocol pings, a slow reader
// disconnected with 1013, the Origin rule, and chat frames counted in the chat rate group.

/** The frames answering chat requests, as `<frame type>:<event type>`; pushes (no requestId) left out. */
const eventsOf = (frames: Frame[]) =>
  frames.filter((frame) => frame.data?.requestId !== undefined).map((frame) => `${frame.type}:${frame.data?.event?.type ?? frame.data?.code}`);

describe('the main WebSocket channel', () => {
  let fake: FakeOllama;
  let service: TestService;
  beforeAll(async () => {
    fake = await startFakeOllama();
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, WS_PING_INTERVAL_MS: '200', ALLOWED_ORIGINS: 'https://app.example.com' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
  });

  it('a chat frame streams its events back, each tagged with the frame id; the exchange is stored', async () => {
    fake.enqueue({ kind: 'text', chunks: ['Hel', 'lo'], usage: { input: 3, output: 2 } });
    const client = await open(wsUrl(service.url, '/ws'));
    client.send({ type: 'message', id: 'first', data: { message: 'Say hello', mode: 'chat' } });
    const frames = await client.until(isDoneOf('first'));
    expect(eventsOf(frames)).toEqual(['message:text', 'message:text', 'context_update:context_update', 'message:done']);
    for (const frame of frames.filter((received) => received.data.kind === undefined)) {
      expect(frame.data.requestId).toBe('first');
      expect(frame.id).toMatch(/^[0-9a-f-]{36}:\d+$/);
      expect(Date.parse(frame.timestamp)).not.toBeNaN();
    }
    const done = frames.at(-1)?.data.event;
    expect(done.metadata).toMatchObject({ provider: 'ollama', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 2 } });
    const stored = await service.request('GET', `/api/conversation/${done.metadata.conversationId}`);
    expect(stored.body.messages.map((message: { content: string }) => message.content)).toEqual(['Say hello', 'Hello']);
    client.close();
  });

  it('tool calls and their results come in tool_call frames', async () => {
    fake.enqueue({ kind: 'tools', calls: [{ id: 'call_1', name: 'git_status', arguments: {} }] }, { kind: 'text', chunks: ['No workspace.'] });
    const client = await open(wsUrl(service.url, '/ws'));
    client.send({ type: 'message', id: 7, data: { message: 'What changed?', mode: 'assistant' } });
    const frames = await client.until(isDoneOf('7'));
    expect(eventsOf(frames)).toEqual(['tool_call:tool_call', 'tool_call:tool_result', 'message:text', 'context_update:context_update', 'message:done']);
    client.close();
  });

  it('an abort frame stops the generation: it ends with done, finishReason aborted', async () => {
    fake.enqueue({ kind: 'text', chunks: Array.from({ length: 50 }, (_, index) => `part ${index} `), chunkDelayMs: 40 });
    const client = await open(wsUrl(service.url, '/ws'));
    client.send({ type: 'message', id: 'long', data: { message: 'Tell a long story' } });
    await client.until((frame) => frame.data?.event?.type === 'text');
    client.send({ type: 'message', id: 'stop-it', data: { action: 'abort', requestId: 'long' } });
    const frames = await client.until(isDoneOf('long'));
    expect(frames.at(-1)?.data.event.metadata.finishReason).toBe('aborted');
    client.send({ type: 'message', id: 'again', data: { action: 'abort', requestId: 'long' } });
    const [notFound] = await client.until((frame) => frame.type === 'error');
    expect(notFound?.data).toMatchObject({ requestId: 'again', code: 'NOT_FOUND' });
    client.close();
  });

  it('bad frames get an error frame naming the frame (or null) and the socket stays open', async () => {
    const client = await open(wsUrl(service.url, '/ws'));
    const errorFor = async (frame: unknown) => {
      client.send(frame);
      return (await client.until((received) => received.type === 'error'))[0]?.data;
    };
    expect(await errorFor('not json')).toMatchObject({ requestId: null, code: 'INVALID_REQUEST' });
    expect(await errorFor({ type: 'message', data: { message: 'no id' } })).toMatchObject({ requestId: null, code: 'INVALID_REQUEST' });
    expect(await errorFor({ type: 'shout', id: 'x1', data: {} })).toMatchObject({ requestId: 'x1', code: 'INVALID_REQUEST' });
    expect(await errorFor({ type: 'message', id: 'x2', data: { action: 'dance' } })).toMatchObject({ requestId: 'x2', code: 'INVALID_REQUEST' });
    const invalid = await errorFor({ type: 'message', id: 'x3', data: { mode: 'chat' } });
    expect(invalid).toMatchObject({ requestId: 'x3', code: 'INVALID_REQUEST' });
    expect(invalid.details.issues[0].path).toEqual(['message']);
    expect(await errorFor({ type: 'message', id: 'x4', data: { message: 'hi', conversation_id: '3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90' } })).toMatchObject({
      requestId: 'x4',
      code: 'NOT_FOUND',
    });

    fake.enqueue({ kind: 'text', chunks: ['still here'] });
    client.send({ type: 'message', id: 'after', data: { message: 'Are you there?' } });
    expect((await client.until(isDoneOf('after'))).at(-1)?.data.event.type).toBe('done');
    client.close();
  });

  it('/ws/markdown-stream sends text in whole lines', async () => {
    fake.enqueue({ kind: 'text', chunks: ['# Ti', 'tle\nfirst ', 'line\n', '- a\n- ', 'b\nlast', ' words'] });
    const client = await open(wsUrl(service.url, '/ws/markdown-stream'));
    client.send({ type: 'message', id: 'md', data: { message: 'Markdown please' } });
    const texts = (await client.until(isDoneOf('md'))).filter((frame) => frame.data.event?.type === 'text').map((frame) => frame.data.event.content as string);
    expect(texts.join('')).toBe('# Title\nfirst line\n- a\n- b\nlast words');
    for (const text of texts.slice(0, -1)) expect(text.endsWith('\n')).toBe(true);
    client.close();
  });

  it('pings every interval; a client that does not answer is dropped', async () => {
    const client = await open(wsUrl(service.url, '/ws'));
    let pings = 0;
    client.socket.on('ping', () => (pings += 1));
    await waitFor(() => (pings >= 2 ? true : undefined), 2000, 'two pings');
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    client.close();

    const silent = await open(wsUrl(service.url, '/ws'), { autoPong: false });
    const { code } = await silent.closed;
    expect(code).toBe(1006); // terminated, no close handshake
  });

  it('an Origin that is neither the service nor allowed is refused with 403; no Origin, its own and an allowed one pass', async () => {
    const refused = await connect(wsUrl(service.url, '/ws'), { headers: { origin: 'https://evil.example' } });
    expect(refused).toMatchObject({ ok: false, status: 403, body: { error: { code: 'SECURITY_VIOLATION' } } });
    const port = new URL(service.url).port;
    for (const origin of [undefined, `http://localhost:${port}`, `http://127.0.0.1:${port}`, 'https://app.example.com']) {
      const accepted = await connect(wsUrl(service.url, '/ws'), origin ? { headers: { origin } } : {});
      expect(accepted.ok, origin).toBe(true);
      if (accepted.ok) accepted.client.close();
    }
  });

  it('an unknown channel is 404, and a wrong Host 403, before anything else', async () => {
    expect(await connect(wsUrl(service.url, '/ws/nothing-here'))).toMatchObject({ ok: false, status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(await connect(wsUrl(service.url, '/ws'), { headers: { host: 'evil.example' } })).toMatchObject({ ok: false, status: 403 });
  });
});

describe('a slow reader', () => {
  it('a reader that stops reading is disconnected with 1013 before 1 MB waits for it; the generation is stored', async () => {
    // Pings at the default 30 s here: a paused reader also misses pongs, which would drop it first.
    await using fake = await startFakeOllama();
    await using service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
    const chunk = 'x'.repeat(10_000) + '\n';
    fake.enqueue({ kind: 'text', chunks: Array.from({ length: 800 }, () => chunk) });
    const client = await open(wsUrl(service.url, '/ws'));
    const raw = (client.socket as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    client.send({ type: 'message', id: 'flood', data: { message: 'Flood me' } });
    raw.pause();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    raw.resume();
    const { code } = await client.closed;
    expect(code).toBe(1013);
    const list = await waitFor(async () => {
      const page = await service.request('GET', '/api/conversations?q=Flood');
      return page.body.total === 1 ? page.body : undefined;
    });
    const stored = await service.request('GET', `/api/conversation/${list.conversations[0].id}`);
    expect(stored.body.messages.at(-1).content).toHaveLength(chunk.length * 800);
  });

});

describe('chat frames and the rate limit', () => {
  it('count in the chat group: past the limit the frame gets a RATE_LIMIT_EXCEEDED error frame', async () => {
    await using fake = await startFakeOllama();
    await using service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_CHAT: '2' });
    const client = await open(wsUrl(service.url, '/ws'));
    for (const id of ['one', 'two']) {
      fake.enqueue({ kind: 'text', chunks: ['ok'] });
      client.send({ type: 'message', id, data: { message: 'hi' } });
      await client.until(isDoneOf(id));
    }
    client.send({ type: 'message', id: 'three', data: { message: 'hi' } });
    const [refused] = await client.until((frame) => frame.type === 'error');
    expect(refused?.data).toMatchObject({ requestId: 'three', code: 'RATE_LIMIT_EXCEEDED', details: { group: 'chat', limit: 2 } });
    // The HTTP chat paths share the counter.
    expect((await service.request('POST', '/api/message', { json: { message: 'hi' } })).status).toBe(429);
    client.close();
  });
});
