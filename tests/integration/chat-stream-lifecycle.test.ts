import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { now } from '../fakes/fake-server.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { openSse, typesOf, type SseEvent, type SseStream } from '../helpers/sse.js';
import { expectEnvelope, request, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// The life of a stream job beyond what chat-streams.test.ts and chat-upstream-errors.test.ts
// cover (CONTRACT §6, §7): the answer stored while it grows and closed as `error` after a crash,
// retention and ownership of stream ids, Last-Event-ID against ?after, abort on the hosted
// providers and in the middle of a tool, whole markdown lines around tool calls, the remaining
// upstream outcomes, and the stored default prompt order reaching the provider.

interface StoredMessage {
  role: string;
  content: string;
  finishReason?: string;
  toolCalls?: { id: string; name: string; params: unknown; result?: any }[];
}

type ProviderName = 'ollama' | 'openai' | 'anthropic';

const chunks = (count: number) => Array.from({ length: count }, (_, index) => `c${index} `);

/** The concatenated content of the `text` events. */
const textOf = (events: readonly SseEvent[]) =>
  events
    .filter((event) => event.data.type === 'text')
    .map((event) => event.data.content as string)
    .join('');

/** A stop predicate for SseStream.events(): true once the text events so far add up to `text`. */
function untilText(text: string): (event: SseEvent) => boolean {
  let seen = '';
  return (event) => {
    if (event.data.type === 'text') seen += event.data.content as string;
    return seen === text;
  };
}

/** The sequence numbers of events whose ids are `<streamId>:<seq>`. */
const seqsOf = (streamId: string, events: readonly SseEvent[]) =>
  events.map((event) => {
    expect(event.id?.startsWith(`${streamId}:`)).toBe(true);
    return Number(event.id?.slice(streamId.length + 1));
  });

/** The system prompt as each provider's wire format carries it. */
function systemPromptOf(provider: ProviderName, body: any): string {
  if (provider === 'anthropic') {
    return Array.isArray(body.system) ? body.system.map((part: { text: string }) => part.text).join('') : body.system;
  }
  return body.messages.find((message: { role: string }) => message.role === 'system')?.content;
}

async function messagesOf(baseUrl: string, conversationId: string): Promise<StoredMessage[]> {
  const reply = await request(baseUrl, 'GET', `/api/conversation/${conversationId}`);
  expect(reply.status, reply.text).toBe(200);
  return reply.body.messages as StoredMessage[];
}

async function currentConversationId(baseUrl: string): Promise<string> {
  const reply = await request(baseUrl, 'GET', '/api/context');
  expect(reply.status, reply.text).toBe(200);
  return reply.body.conversationId as string;
}

describeOnDatabases('chat stream lifecycle', (kind) => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let workspace: Folder;
  let svc: TestService;

  beforeAll(async () => {
    [ollama, openai, anthropic] = await Promise.all([startFakeOllama(), startFakeOpenAI(), startFakeAnthropic()]);
    workspace = makeFolder();
    workspace.file('notes.txt', 'hello notes\n');
    svc = await startTestService(kind, {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      RATE_LIMIT_ENABLED: 'false',
    });
    // Registered, so `local` (and every user without a choice of their own) has it active.
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'lifecycle', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), anthropic.close()]);
    workspace[Symbol.dispose]();
  });
  beforeEach(async () => {
    ollama.reset();
    openai.reset();
    anthropic.reset();
    // Each test in a conversation of its own, so "the last stored message" is this test's.
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
  });

  const providers: { name: ProviderName; fake: () => FakeProvider; streamPath: string; messagePath: string; body: (message: string) => Record<string, unknown> }[] = [
    { name: 'ollama', fake: () => ollama, streamPath: '/api/message/stream', messagePath: '/api/message', body: (message) => ({ message, mode: 'chat' }) },
    {
      name: 'openai',
      fake: () => openai,
      streamPath: '/api/unified/stream',
      messagePath: '/api/unified/message',
      body: (message) => ({ message, mode: 'chat', provider: 'openai', apiKey: 'sk-test' }),
    },
    {
      name: 'anthropic',
      fake: () => anthropic,
      streamPath: '/api/anthropic/stream',
      messagePath: '/api/anthropic/message',
      body: (message) => ({ message, mode: 'chat', apiKey: 'sk-ant-test' }),
    },
  ];
  const hosted = providers.filter((provider) => provider.name !== 'ollama');

  describe('storage while streaming', () => {
    it('stores the assistant answer as it grows: the partial text is readable while the stream still runs', async () => {
      // Two chunks, then the provider goes silent with the request open: the stream is mid-answer.
      ollama.enqueue({ kind: 'stallMidStream', chunks: ['The answer ', 'so far', ' and the rest'], after: 2 });
      const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'grow slowly', mode: 'chat' } });
      expect(stream.status).toBe(200);
      const streamId = stream.headers.get('x-stream-id') ?? '';
      expect(typesOf(await stream.events(untilText('The answer so far')))).toEqual(['text', 'text']);
      const conversationId = await currentConversationId(svc.url);

      // At most 250 ms behind the stream (CONTRACT §6), while the stream itself would wait a
      // minute (PROVIDER_TIMEOUT_MS) before ending; polled, not slept.
      const growing = await waitFor(
        async () => {
          const last = (await messagesOf(svc.url, conversationId)).at(-1);
          return last?.role === 'assistant' && last.content === 'The answer so far' ? last : undefined;
        },
        1500,
        'the partial answer to be stored',
      );
      expect(growing.finishReason).toBeUndefined();
      // Still mid-stream: the provider request is open and no done was sent.
      expect(ollama.chatRequests()[0]?.closedAt).toBeUndefined();
      expect(svc.service.deps.streams.require('local', streamId).running).toBe(true);

      // Ends the stalled generation; the stored text stays what was streamed.
      expect((await svc.request('POST', `/api/streams/${streamId}/abort`)).status).toBe(200);
      const rest = await stream.events();
      expect(typesOf(rest)).toEqual(['context_update', 'done']);
      expect(rest.at(-1)?.data.metadata.finishReason).toBe('aborted');
      expect((await messagesOf(svc.url, conversationId)).at(-1)).toMatchObject({ role: 'assistant', content: 'The answer so far', finishReason: 'aborted' });
    });
  });

  describe('resuming', () => {
    it('GET /api/streams/:id takes the position from Last-Event-ID when ?after is given too, below or above it', async () => {
      ollama.enqueue({ kind: 'text', chunks: ['a', 'b', 'c', 'd', 'e', 'f'] });
      const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'six letters', mode: 'chat' } });
      const streamId = stream.headers.get('x-stream-id') ?? '';
      // 6 text events, context_update, done.
      expect(seqsOf(streamId, await stream.events())).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

      const headerBelow = await openSse(`${svc.url}/api/streams/${streamId}?after=5`, { headers: { 'Last-Event-ID': `${streamId}:2` } });
      expect(headerBelow.status).toBe(200);
      const fromTwo = await headerBelow.events();
      expect(seqsOf(streamId, fromTwo)).toEqual([3, 4, 5, 6, 7, 8]);
      expect(textOf(fromTwo)).toBe('cdef');

      const headerAbove = await openSse(`${svc.url}/api/streams/${streamId}?after=1`, { headers: { 'Last-Event-ID': `${streamId}:6` } });
      expect(typesOf(await headerAbove.events())).toEqual(['context_update', 'done']);
    });
  });

  describe('ownership and permissions (procedure level: auth is off, so HTTP callers are all `local`)', () => {
    it("another user's stream id is 404 on get and abort, while it runs and after; it keeps running", async () => {
      const aliceId = `alice-${kind}`;
      const alice = callerFor(svc.service.deps, userWith(aliceId, ['User']));
      const bob = callerFor(svc.service.deps, userWith(`bob-${kind}`, ['User']));
      const all = chunks(12);
      ollama.enqueue({ kind: 'text', chunks: all, chunkDelayMs: 40 });
      const { streamId } = await alice.chat.stream({ message: 'alice streams', mode: 'chat' });
      const job = svc.service.deps.streams.require(aliceId, streamId);

      expect(await errorCodeOf(bob.streams.get({ streamId }))).toBe('NOT_FOUND');
      expect(await errorCodeOf(bob.streams.abort({ streamId }))).toBe('NOT_FOUND');
      // `local`, every HTTP caller while auth is off, is another user as well.
      expectEnvelope(await svc.request('GET', `/api/streams/${streamId}`), 404, 'NOT_FOUND');
      expectEnvelope(await svc.request('POST', `/api/streams/${streamId}/abort`), 404, 'NOT_FOUND');
      // The refusals happened while the stream was running, and did not stop it.
      expect(job.running).toBe(true);
      expect(job.signal.aborted).toBe(false);
      expect(await alice.streams.get({ streamId })).toEqual({ streamId, after: 0 });

      await job.finished();
      const { conversationId } = await alice.context.get({});
      const stored = (await alice.conversations.get({ id: conversationId })).messages.at(-1);
      expect(stored).toMatchObject({ role: 'assistant', content: all.join(''), finishReason: 'stop' });

      // Finished and still retained: the owner may abort it (a no-op), others still get 404.
      expect(await errorCodeOf(bob.streams.get({ streamId }))).toBe('NOT_FOUND');
      expect(await errorCodeOf(bob.streams.abort({ streamId }))).toBe('NOT_FOUND');
      expect(await alice.streams.abort({ streamId })).toEqual({ success: true });
    });

    it('mode "agent" without terminal:execute is 403 FORBIDDEN before the provider is called or anything is stored', async () => {
      const userId = `plain-${kind}`;
      const plain = callerFor(svc.service.deps, userWith(userId, ['User']));
      expect(await errorCodeOf(plain.chat.stream({ message: 'run things', mode: 'agent' }))).toBe('FORBIDDEN');
      expect(await errorCodeOf(plain.chat.send({ message: 'run things', mode: 'agent' }))).toBe('FORBIDDEN');
      expect(await errorCodeOf(plain.chat.streamMarkdown({ message: 'run things', mode: 'agent' }))).toBe('FORBIDDEN');
      expect(ollama.chatRequests()).toEqual([]);
      expect((await plain.conversations.list({ limit: 50, offset: 0, q: 'run things' })).total).toBe(0);
      const denial = await svc.service.deps.store.db.auditEntry.findFirst({ where: { userId, type: 'access' } });
      expect(denial?.details).toMatchObject({ action: 'denied', missing: 'terminal:execute' });

      // The refusal is the mode's: the same user chats in assistant mode.
      ollama.enqueue({ kind: 'text', chunks: ['glad to help'] });
      expect((await plain.chat.send({ message: 'just help', mode: 'assistant' })).response).toBe('glad to help');
      expect(ollama.chatRequests()).toHaveLength(1);
    });
  });

  describe('abort on the hosted providers', () => {
    for (const provider of hosted) {
      it(`closes the ${provider.name} request at once, ends with done(aborted) and stores the partial answer as aborted`, async () => {
        const fake = provider.fake();
        // A second apart: a provider request closed only when its next chunk arrives would miss
        // the 100 ms by far.
        const all = chunks(10);
        fake.enqueue({ kind: 'text', chunks: all, chunkDelayMs: 1000 });
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`abort ${provider.name}`) });
        expect(stream.status).toBe(200);
        const streamId = stream.headers.get('x-stream-id') ?? '';
        const first = await stream.events((event) => event.data.type === 'text');

        const abort = await svc.request('POST', `/api/streams/${streamId}/abort`);
        const repliedAt = now();
        expect(abort.status).toBe(200);
        expect(abort.body).toEqual({ success: true });
        const closed = await fake.waitForClientClose(0, 2000);
        expect((closed.closedAt ?? Infinity) - repliedAt).toBeLessThan(100);

        const rest = await stream.events();
        const events = [...first, ...rest];
        expect(typesOf(rest).slice(-2)).toEqual(['context_update', 'done']);
        expect(typesOf(events).filter((type) => type === 'done')).toHaveLength(1);
        expect(typesOf(events)).not.toContain('error');
        const done = rest.at(-1)?.data;
        expect(done.metadata).toMatchObject({ provider: provider.name, finishReason: 'aborted' });

        // What is stored is exactly what was streamed, and less than the whole answer.
        const streamed = textOf(events);
        expect(all.join('').startsWith(streamed)).toBe(true);
        expect(streamed.length).toBeLessThan(all.join('').length);
        const last = (await messagesOf(svc.url, done.metadata.conversationId)).at(-1);
        expect(last).toMatchObject({ role: 'assistant', content: streamed, finishReason: 'aborted' });
      });
    }
  });

  describe('markdown streams around tool calls', () => {
    const cases = [
      { path: '/api/markdown/stream', after: [' at', ' it.\nDo', 'ne\n'], answer: 'Let me look at it.\nDone\n' },
      // The last line has no newline: it is flushed at the end, the only text event allowed without one.
      { path: '/api/message/stream/markdown', after: [' at', ' it.\nDo', 'ne'], answer: 'Let me look at it.\nDone' },
    ];
    for (const { path, after, answer } of cases) {
      it(`${path}: every text event is whole lines even when a tool call splits a line (answer ${JSON.stringify(answer)})`, async () => {
        ollama.enqueue(
          { kind: 'tools', text: 'Let me look', calls: [{ id: 'call_list', name: 'list_files', arguments: { path: '.' } }] },
          { kind: 'text', chunks: after },
        );
        const stream = await openSse(`${svc.url}${path}`, { json: { message: 'look around', mode: 'assistant' } });
        expect(stream.status, JSON.stringify(stream.json)).toBe(200);
        const events = await stream.events();
        const types = typesOf(events);
        expect(types.slice(-2)).toEqual(['context_update', 'done']);
        expect(types.filter((type) => type === 'tool_call')).toHaveLength(1);
        expect(types.filter((type) => type === 'tool_result')).toHaveLength(1);
        // "Let me look" is no whole line, so nothing of it may go out before the tool call.
        expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('text'));

        const texts = events.filter((event) => event.data.type === 'text').map((event) => event.data.content as string);
        const lastText = types.lastIndexOf('text');
        expect(lastText).toBe(types.length - 3);
        texts.slice(0, -1).forEach((content) => {
          expect(content.endsWith('\n'), JSON.stringify(texts)).toBe(true);
        });
        expect(texts.join('')).toBe(answer);
        const done = events.at(-1)?.data;
        expect(done.metadata.finishReason).toBe('stop');
        expect((await messagesOf(svc.url, done.metadata.conversationId)).at(-1)).toMatchObject({ role: 'assistant', content: answer });
      });
    }
  });

  describe('upstream outcomes not covered by chat-upstream-errors.test.ts', () => {
    for (const provider of providers) {
      it(`${provider.name}: a provider 403 before the stream → 400 INVALID_REQUEST as a JSON envelope`, async () => {
        provider.fake().enqueue({ kind: 'fail', status: 403 });
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${provider.name} forbidden`) });
        expect(stream.status).toBe(400);
        expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
        expect(stream.headers.get('x-stream-id')).toBeNull();
        expect(stream.json).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST', details: { provider: provider.name, status: 403 } } });
        expect(provider.fake().chatRequests()).toHaveLength(1);
      });

      it(`${provider.name}: an answer cut by the token limit ends with done(length), stored as length`, async () => {
        provider.fake().enqueue({ kind: 'text', chunks: ['Cut ', 'short'], finishReason: 'length' });
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${provider.name} long one`) });
        expect(stream.status).toBe(200);
        const events = await stream.events();
        expect(typesOf(events)).toEqual(['text', 'text', 'context_update', 'done']);
        const done = events.at(-1)?.data;
        expect(done.metadata).toMatchObject({ provider: provider.name, finishReason: 'length' });
        expect((await messagesOf(svc.url, done.metadata.conversationId)).at(-1)).toMatchObject({
          role: 'assistant',
          content: 'Cut short',
          finishReason: 'length',
        });
      });
    }

    // Ollama's in-stream errors carry no kind (a bare message), so only the hosted providers can say 429.
    for (const provider of hosted) {
      it(`${provider.name}: a rate-limit error inside the stream → error(RATE_LIMIT_EXCEEDED), context_update, done(error)`, async () => {
        provider.fake().enqueue({ kind: 'streamError', chunks: ['one ', 'two '], after: 1, status: 429 });
        const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${provider.name} rate limited midway`) });
        expect(stream.status).toBe(200);
        const events = await stream.events();
        expect(typesOf(events)).toEqual(['text', 'error', 'context_update', 'done']);
        expect(events[1]?.data).toMatchObject({ type: 'error', code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String) });
        const done = events.at(-1)?.data;
        expect(done.metadata).toMatchObject({ provider: provider.name, finishReason: 'error' });
        expect((await messagesOf(svc.url, done.metadata.conversationId)).at(-1)).toMatchObject({ role: 'assistant', content: 'one ', finishReason: 'error' });
      });
    }
  });

  describe('the stored default prompt order', () => {
    it('is what the provider receives as the system prompt when the chat names no order', async () => {
      const systemText = `HOUSE RULES ${kind}: answer in haiku.`;
      const saved = await svc.request('POST', '/api/prompt-orders', {
        json: {
          order: {
            name: 'house default',
            isDefault: true,
            sections: [{ type: 'system', content: systemText }, { type: 'conversation_history' }, { type: 'user_message' }],
          },
        },
      });
      expect(saved.status, saved.text).toBe(200);
      const orderId = saved.body.orderId as string;
      try {
        for (const provider of providers) {
          provider.fake().enqueue({ kind: 'text', chunks: ['ok'] });
          const stream = await openSse(`${svc.url}${provider.streamPath}`, { json: provider.body(`${provider.name} with the house rules`) });
          expect(stream.status, JSON.stringify(stream.json)).toBe(200);
          expect(typesOf(await stream.events()).at(-1)).toBe('done');
          // Only the system section is enabled, so it is the whole system prompt.
          expect(systemPromptOf(provider.name, provider.fake().chatRequests().at(-1)?.body)).toBe(systemText);
        }
        // The non-streaming paths assemble it the same way.
        for (const provider of providers) {
          provider.fake().enqueue({ kind: 'text', chunks: ['ok'] });
          const reply = await svc.request('POST', provider.messagePath, { json: provider.body(`${provider.name} plain with the house rules`) });
          expect(reply.status, reply.text).toBe(200);
          expect(systemPromptOf(provider.name, provider.fake().chatRequests().at(-1)?.body)).toBe(systemText);
        }
      } finally {
        // Later tests in this suite expect the built-in order.
        expect((await svc.request('DELETE', `/api/prompt-orders/${orderId}`)).status).toBe(200);
      }
    });
  });
});

describeOnDatabases('stream retention', (kind) => {
  it('abort answers {success:true} within STREAM_RETENTION_MS after done, and 404 once it has passed', async () => {
    await using fake = await startFakeOllama();
    const retentionMs = 200;
    await using svc = await startTestService(kind, { OLLAMA_BASE_URL: fake.url, STREAM_RETENTION_MS: String(retentionMs), RATE_LIMIT_ENABLED: 'false' });
    fake.enqueue({ kind: 'text', chunks: ['short', ' lived'] });
    const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'brief', mode: 'chat' } });
    const streamId = stream.headers.get('x-stream-id') ?? '';
    expect(typesOf(await stream.events()).at(-1)).toBe('done');
    const doneAt = Date.now();

    expect((await svc.request('POST', `/api/streams/${streamId}/abort`)).body).toEqual({ success: true });
    expect(Date.now() - doneAt).toBeLessThan(retentionMs);
    await sleep(retentionMs + 20);
    // Forgotten by a periodic sweep (at most one retention period apart), so the 404 may come a
    // little after the retention itself, but not much.
    const expired = await waitFor(
      async () => {
        const reply = await svc.request('POST', `/api/streams/${streamId}/abort`);
        return reply.status === 200 ? undefined : reply;
      },
      1000,
      'the stream to expire',
    );
    expectEnvelope(expired, 404, 'NOT_FOUND');
    expectEnvelope(await svc.request('GET', `/api/streams/${streamId}`), 404, 'NOT_FOUND');
  });
});

describeOnDatabases('an answer left mid-stream by a crash', (kind) => {
  it('is closed as error at the next start-up, keeping the partial text stored before the kill -9', async () => {
    await using fake = await startFakeOllama();
    const database = await createTestDatabase(kind);
    const env = { DATABASE_URL: database.url, OLLAMA_BASE_URL: fake.url, RATE_LIMIT_ENABLED: 'false' };
    let first: ChildService | undefined;
    let second: ChildService | undefined;
    try {
      first = await spawnService(env);
      fake.enqueue({ kind: 'stallMidStream', chunks: ['Half ', 'an answer', ' never sent'], after: 2 });
      const stream = await openSse(`${first.url}/api/message/stream`, { json: { message: 'crash during this', mode: 'chat' } });
      expect(stream.status).toBe(200);
      await stream.events(untilText('Half an answer'));
      const conversationId = await currentConversationId(first.url);
      const url = first.url;
      await waitFor(
        async () => {
          const last = (await messagesOf(url, conversationId)).at(-1);
          return last?.role === 'assistant' && last.content === 'Half an answer' && last.finishReason === undefined ? last : undefined;
        },
        3000,
        'the partial answer to be stored',
      );

      first.child.kill('SIGKILL');
      expect((await first.exit).signal).toBe('SIGKILL');
      await stream.cancel().catch(() => undefined);

      second = await spawnService(env);
      const closedLine = second.lines.map((line) => JSON.parse(line) as { msg?: string; closed?: number }).find((line) => line.msg === 'closed answers interrupted by an earlier crash');
      expect(closedLine?.closed).toBe(1);
      const messages = await messagesOf(second.url, conversationId);
      expect(messages.map(({ role, content, finishReason }) => ({ role, content, finishReason }))).toEqual([
        { role: 'user', content: 'crash during this', finishReason: undefined },
        { role: 'assistant', content: 'Half an answer', finishReason: 'error' },
      ]);
    } finally {
      first?.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      await Promise.all([first?.exit, second?.exit]);
      await database.drop();
    }
  });
});

describeOnDatabasesWithSandbox('abort while run_command runs', (kind) => {
  let fake: FakeOllama;
  let workspace: Folder;
  let svc: TestService;

  beforeAll(async () => {
    fake = await startFakeOllama();
    workspace = makeFolder();
    svc = await startTestService(kind, { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: 'true', SANDBOX: 'bwrap', RATE_LIMIT_ENABLED: 'false' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'sandboxed', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });
  beforeEach(() => {
    fake.reset();
  });
  // A fresh agent terminal per test, and no `sleep 30` outliving a failed one.
  afterEach(() => {
    const { terminals } = svc.service.deps;
    for (const terminal of terminals.listFor('local')) terminals.remove(terminal);
  });

  interface TerminalView {
    terminalId: string;
    status: string;
    lastExitCode: number | null;
  }
  const terminalsOfLocal = async () => (await svc.request('GET', '/api/terminals')).body.terminals as TerminalView[];
  const outputOf = async (terminalId: string) => (await svc.request('GET', `/api/terminals/${terminalId}/output`)).body.output as string;

  /** Starts an agent answer whose model asks for `sleep 30`, and reads up to its tool_call. */
  async function startSleepingTool() {
    fake.enqueue({ kind: 'tools', calls: [{ id: 'call_sleep', name: 'run_command', arguments: { command: 'sleep 30' } }] }, { kind: 'text', chunks: ['never asked for'] });
    const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'take your time', mode: 'agent' } });
    expect(stream.status, JSON.stringify(stream.json)).toBe(200);
    const first = await stream.events((event) => event.data.type === 'tool_call');
    // Ollama's calls carry no id: the service names them, and tool_result must repeat it.
    expect(first.map((event) => event.data)).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'run_command', params: { command: 'sleep 30' } }]);
    return { stream, streamId: stream.headers.get('x-stream-id') ?? '', callId: first[0]?.data.id as string };
  }

  /** Aborts, then expects tool_result(error), context_update, done(aborted) well within 2 s. */
  async function abortAndExpectPromptEnd(stream: SseStream, streamId: string, callId: string) {
    const abortedAt = performance.now();
    expect((await svc.request('POST', `/api/streams/${streamId}/abort`)).body).toEqual({ success: true });
    const rest = await stream.events();
    const took = performance.now() - abortedAt;
    expect(typesOf(rest)).toEqual(['tool_result', 'context_update', 'done']);
    expect(took).toBeLessThan(2000);
    expect(rest[0]?.data).toMatchObject({ id: callId, name: 'run_command', result: { error: expect.any(String) } });
    const done = rest.at(-1)?.data;
    expect(done.metadata.finishReason).toBe('aborted');
    const stored = (await messagesOf(svc.url, done.metadata.conversationId)).at(-1);
    expect(stored).toMatchObject({ role: 'assistant', finishReason: 'aborted' });
    expect(stored?.toolCalls).toEqual([
      { id: callId, name: 'run_command', params: { command: 'sleep 30' }, result: expect.objectContaining({ error: expect.any(String) }) },
    ]);
  }

  /** The terminal is idle again long before the 30 s are up: nothing is left running in it. */
  async function expectIdleSoon(terminalId: string): Promise<TerminalView> {
    return waitFor(
      async () => (await terminalsOfLocal()).find((candidate) => candidate.terminalId === terminalId && candidate.status === 'running'),
      5000,
      'the terminal to go back from busy to running',
    );
  }

  it('once the command has been sent: the answer ends at once and the command is interrupted (Ctrl-C)', async () => {
    const { stream, streamId, callId } = await startSleepingTool();
    // Sent to the shell: the session log shows it (the terminal is busy from its first check on).
    const terminal = await waitFor(
      async () => {
        const busy = (await terminalsOfLocal()).find((candidate) => candidate.status === 'busy');
        return busy && (await outputOf(busy.terminalId)).includes('$ sleep 30') ? busy : undefined;
      },
      10_000,
      'the command to be sent to the agent terminal',
    );
    await abortAndExpectPromptEnd(stream, streamId, callId);
    expect((await expectIdleSoon(terminal.terminalId)).lastExitCode).toBe(130);
  });

  // The window between the terminal's reservation (busy) and the line going to the shell is the
  // risk analysis and the command's audit entry: a few milliseconds once warm, half a second for
  // the first command of a process (the shell parser loads). To abort inside it deterministically
  // the audit table is locked meanwhile, which PostgreSQL can do for that one table; SQLite has a
  // single write lock, which would also hold back the question and the answer.
  if (kind === 'postgresql') {
    it('while the command is still being checked (busy, not yet sent to the shell): it must not run afterwards', async () => {
      // Makes the agent's terminal first (its creation is audited too) and loads the analysis.
      fake.enqueue({ kind: 'tools', calls: [{ id: 'call_warm', name: 'run_command', arguments: { command: 'echo ready' } }] }, { kind: 'text', chunks: ['ready'] });
      const warm = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'warm up', mode: 'agent' } });
      expect(typesOf(await warm.events()).at(-1)).toBe('done');
      const [agentTerminal] = await terminalsOfLocal();
      expect(agentTerminal?.status).toBe('running');

      const holder = new pg.Client({ connectionString: svc.database.url });
      await holder.connect();
      let holding = false;
      const release = async () => {
        if (!holding) return;
        holding = false;
        await holder.query('COMMIT');
      };
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE "AuditEntry" IN EXCLUSIVE MODE');
        holding = true;
        const { stream, streamId, callId } = await startSleepingTool();
        await waitFor(
          async () => ((await terminalsOfLocal()).find((candidate) => candidate.terminalId === agentTerminal?.terminalId)?.status === 'busy' ? true : undefined),
          5000,
          'the agent terminal to be reserved for the command',
        );
        expect(await outputOf(agentTerminal?.terminalId ?? '')).not.toContain('$ sleep 30');
        await abortAndExpectPromptEnd(stream, streamId, callId);
        // The analysis may now finish; the aborted answer's command must not run after all (not
        // sent, or interrupted at once).
        await release();
        const terminalId = agentTerminal?.terminalId ?? '';
        const idle = await expectIdleSoon(terminalId).catch(() => null);
        expect(idle, `the terminal is still busy 5 s after the abort; its log: ${JSON.stringify(await outputOf(terminalId))}`).not.toBeNull();
        // Not sent at all (not merely interrupted), and the audit log says why.
        expect(await outputOf(terminalId)).not.toContain('$ sleep 30');
        const audit = (await svc.request('GET', '/api/audit/log?type=command&limit=5')).body.entries as { details: { action: string; command: string } }[];
        expect(audit.find((entry) => entry.details.command === 'sleep 30')?.details.action).toBe('aborted');
      } finally {
        await release();
        await holder.end();
      }
    });
  }
});
