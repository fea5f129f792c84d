import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider } from '../fakes/index.js';
import { callerFor, userWith } from '../helpers/callers.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { openSse } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §7 (and §3's default title): what the model is sent of a conversation. The model sees
// the last MAX_CONVERSATION_HISTORY stored messages (a tool call never without its result, nor a
// result without its call), storage keeps everything; conversation_id picks the conversation
// (someone else's or an unknown one is 404 before the provider is called) and makes it current;
// options.temperature / options.maxTokens reach the provider, DEFAULT_TEMPERATURE otherwise.

const unknownId = '4b0c5c1e-3f7a-4d2b-9a51-0c6f1e2d3a4b';

interface UpstreamMessage {
  role: string;
  content: unknown;
  tool_calls?: { id: string; type?: string; function: { name: string; arguments: unknown } }[];
  tool_call_id?: string;
}

/** Every tool result answers a call made before it, and every call is answered right after it. */
function expectToolPairsIntact(messages: UpstreamMessage[]) {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.role === 'tool') {
      const id = message.tool_call_id ?? '';
      expect(id, 'a tool result that names no call').not.toBe('');
      expect(open.has(id), `tool result ${id} without its call`).toBe(true);
      open.delete(id);
      continue;
    }
    expect([...open], 'a tool call without its result').toEqual([]);
    for (const call of message.tool_calls ?? []) open.add(call.id);
  }
  expect([...open], 'a tool call without its result').toEqual([]);
}

describe('chat memory', () => {
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let workspace: Folder;
  let svc: TestService;

  beforeAll(async () => {
    [ollama, openai] = await Promise.all([startFakeOllama(), startFakeOpenAI()]);
    workspace = makeFolder();
    workspace.file('notes.txt', 'remember the milk\n');
    svc = await startTestService('sqlite', {
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      MAX_CONVERSATION_HISTORY: '3',
      DEFAULT_TEMPERATURE: '0.3',
      RATE_LIMIT_ENABLED: 'false',
    });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'memory', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close()]);
    workspace[Symbol.dispose]();
  });
  beforeEach(async () => {
    ollama.reset();
    openai.reset();
    expect((await svc.request('POST', '/api/context/clear')).status).toBe(200);
  });

  const currentId = async () => (await svc.request('GET', '/api/context')).body.conversationId as string;
  const stored = async (conversationId: string) => {
    const reply = await svc.request('GET', `/api/conversation/${conversationId}`);
    expect(reply.status).toBe(200);
    return reply.body as { conversation: { title: string; messageCount: number }; messages: { role: string; content: string; toolCalls?: unknown[] }[] };
  };
  const send = async (message: string, extra: Record<string, unknown> = {}) => {
    const reply = await svc.request('POST', '/api/message', { json: { message, mode: 'chat', ...extra } });
    expect(reply.status, reply.text).toBe(200);
    return reply.body as { response: string; conversation_id: string; context: { conversationId: string; title: string; messageCount: number } };
  };
  const importConversation = async (messages: { role: string; content: string }[]) => {
    const reply = await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages } } });
    expect(reply.status).toBe(200);
    return reply.body.conversationId as string;
  };
  /** The messages of the latest upstream chat request, the system prompt first. */
  const lastUpstream = (fake: FakeProvider) => fake.chatRequests().at(-1)?.body.messages as UpstreamMessage[];
  const withoutSystem = (messages: UpstreamMessage[]) => {
    expect(messages[0]).toMatchObject({ role: 'system', content: expect.stringMatching(/\S/) });
    expect(messages.filter((message) => message.role === 'system')).toHaveLength(1);
    return messages.slice(1).map(({ role, content }) => ({ role, content }));
  };

  describe('the history window', () => {
    it('sends the system prompt, exactly the last MAX_CONVERSATION_HISTORY stored messages and the new one; storage keeps all', async () => {
      for (let round = 1; round <= 4; round++) {
        ollama.enqueue({ kind: 'text', chunks: [`a${round}`] });
        expect((await send(`u${round}`)).response).toBe(`a${round}`);
        if (round === 2) {
          // Fewer stored messages than the limit: all of them.
          expect(withoutSystem(lastUpstream(ollama))).toEqual([
            { role: 'user', content: 'u1' },
            { role: 'assistant', content: 'a1' },
            { role: 'user', content: 'u2' },
          ]);
        }
      }
      ollama.enqueue({ kind: 'text', chunks: ['a5'] });
      await send('u5');
      expect(withoutSystem(lastUpstream(ollama))).toEqual([
        { role: 'assistant', content: 'a3' },
        { role: 'user', content: 'u4' },
        { role: 'assistant', content: 'a4' },
        { role: 'user', content: 'u5' },
      ]);

      const { conversation, messages } = await stored(await currentId());
      expect(messages.map(({ role, content }) => `${role}:${content}`)).toEqual(
        [1, 2, 3, 4, 5].flatMap((round) => [`user:u${round}`, `assistant:a${round}`]),
      );
      expect(conversation.messageCount).toBe(10);
    });

    it('drops an imported tool result whose call it does not have (never a result without its call)', async () => {
      const id = await importConversation([
        { role: 'user', content: 'q1' },
        { role: 'assistant', content: 'a1' },
        { role: 'tool', content: '{"ok":true}' },
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'a2' },
      ]);
      ollama.enqueue({ kind: 'text', chunks: ['a3'] });
      await send('q3', { conversation_id: id, mode: 'assistant' });
      const upstream = lastUpstream(ollama);
      expect(upstream.some((message) => message.role === 'tool')).toBe(false);
      expect(withoutSystem(upstream)).toEqual([
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'a2' },
        { role: 'user', content: 'q3' },
      ]);
      // The imported tool message is still stored.
      expect((await stored(id)).messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant', 'user', 'assistant']);
    });

    it('keeps a tool call and its result together when the window starts at them', async () => {
      const body = (message: string, mode = 'assistant') => ({ message, mode, provider: 'openai', apiKey: 'sk-test' });
      openai.enqueue(
        { kind: 'tools', calls: [{ id: 'call_1', name: 'list_files', arguments: { path: '.' } }] },
        { kind: 'text', chunks: ['There is notes.txt.'] },
      );
      const first = await svc.request('POST', '/api/unified/message', { json: body('what is in the workspace?') });
      expect(first.status, first.text).toBe(200);
      expect(first.body.toolCalls).toEqual([
        { id: 'call_1', name: 'list_files', params: { path: '.' }, result: { path: '.', entries: [{ name: 'notes.txt', type: 'file', size: 18 }], truncated: false } },
      ]);
      openai.enqueue({ kind: 'text', chunks: ['fine'] });
      expect((await svc.request('POST', '/api/unified/message', { json: body('and otherwise?') })).status).toBe(200);

      // Stored: user, assistant(call+result+text), user, assistant. The window of 3 starts at the tool answer.
      const conversationId = await currentId();
      const { messages } = await stored(conversationId);
      expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(messages[1]).toMatchObject({ content: 'There is notes.txt.', toolCalls: [expect.objectContaining({ id: 'call_1', name: 'list_files' })] });

      openai.enqueue({ kind: 'text', chunks: ['ok'] });
      expect((await svc.request('POST', '/api/unified/message', { json: body('thanks') })).status).toBe(200);
      const upstream = lastUpstream(openai);
      expectToolPairsIntact(upstream);
      expect(upstream.map((message) => message.role)).toEqual(['system', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user']);
      expect(upstream[1]?.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } }]);
      expect(upstream[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
      expect(JSON.parse(upstream[2]?.content as string)).toEqual({ path: '.', entries: [{ name: 'notes.txt', type: 'file', size: 18 }], truncated: false });
      expect(upstream.slice(3).map(({ role, content }) => ({ role, content }))).toEqual([
        { role: 'assistant', content: 'There is notes.txt.' },
        { role: 'user', content: 'and otherwise?' },
        { role: 'assistant', content: 'fine' },
        { role: 'user', content: 'thanks' },
      ]);

      // In chat mode no tools are on offer: the earlier call is told as text, with no tool messages.
      openai.enqueue({ kind: 'text', chunks: ['ok'] });
      expect((await svc.request('POST', '/api/unified/message', { json: body('bye', 'chat') })).status).toBe(200);
      const told = lastUpstream(openai);
      expect(told.some((message) => message.role === 'tool' || message.tool_calls !== undefined)).toBe(false);
      expect(openai.chatRequests().at(-1)?.body.tools).toBeUndefined();
    });
  });

  describe('which conversation', () => {
    it('conversation_id targets that conversation, which becomes current', async () => {
      const before = await currentId();
      const imported = await importConversation([
        { role: 'user', content: 'imported question' },
        { role: 'assistant', content: 'imported answer' },
      ]);
      expect(await currentId()).toBe(before);
      ollama.enqueue({ kind: 'text', chunks: ['continued'] });
      const reply = await send('continue it', { conversation_id: imported });
      expect(reply.conversation_id).toBe(imported);
      expect(reply.context).toMatchObject({ conversationId: imported, messageCount: 4, title: 'imported question' });
      expect(withoutSystem(lastUpstream(ollama))).toEqual([
        { role: 'user', content: 'imported question' },
        { role: 'assistant', content: 'imported answer' },
        { role: 'user', content: 'continue it' },
      ]);
      expect(await currentId()).toBe(imported);
      expect((await stored(before)).messages).toEqual([]);

      // Without conversation_id the current one (now the imported one) is used.
      ollama.enqueue({ kind: 'text', chunks: ['again'] });
      expect((await send('and again')).conversation_id).toBe(imported);
      expect((await stored(imported)).messages.map((message) => message.content)).toEqual([
        'imported question',
        'imported answer',
        'continue it',
        'continued',
        'and again',
        'again',
      ]);
    });

    it('without conversation_id the current conversation is used', async () => {
      const current = await currentId();
      ollama.enqueue({ kind: 'text', chunks: ['hi'] });
      const reply = await send('hello there');
      expect(reply.conversation_id).toBe(current);
      expect(reply.context.conversationId).toBe(current);
      expect(await currentId()).toBe(current);
    });

    it("an unknown, malformed or another user's conversation_id is 404, before the provider is called", async () => {
      const alice = callerFor(svc.service.deps, userWith('alice', ['User']));
      const { conversationId: alices } = await alice.conversations.save({
        conversationData: { messages: [{ role: 'user', content: 'alice only' }] },
      });
      const current = await currentId();
      for (const conversationId of [unknownId, 'not-a-uuid', alices]) {
        expectEnvelope(await svc.request('POST', '/api/message', { json: { message: 'intrude', mode: 'chat', conversation_id: conversationId } }), 404, 'NOT_FOUND');
        const stream = await openSse(`${svc.url}/api/message/stream`, { json: { message: 'intrude', mode: 'chat', conversation_id: conversationId } });
        expect(stream.status).toBe(404);
        expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
        expect(stream.json.error.code).toBe('NOT_FOUND');
      }
      expect(ollama.chatRequests()).toEqual([]);
      expect((await alice.conversations.get({ id: alices })).messages.map((message) => message.content)).toEqual(['alice only']);
      expect(await currentId()).toBe(current);
      expect((await stored(current)).messages).toEqual([]);
    });

    it('titles a new conversation with the first line of the first user message, at most 60 characters', async () => {
      const firstLine = `  Refactor the ${'very '.repeat(12)}long module  `;
      expect(firstLine.trim().length).toBeGreaterThan(60);
      ollama.enqueue({ kind: 'text', chunks: ['ok'] });
      const reply = await send(`${firstLine}\nwith a second line`);
      const expected = firstLine.trim().slice(0, 60);
      expect(reply.context.title).toBe(expected);
      expect((await stored(reply.conversation_id)).conversation.title).toBe(expected);

      ollama.enqueue({ kind: 'text', chunks: ['ok'] });
      expect((await send('a later message does not retitle it')).context.title).toBe(expected);

      ollama.enqueue({ kind: 'text', chunks: ['ok'] });
      await svc.request('POST', '/api/context/clear');
      expect((await send('short\nsecond')).context.title).toBe('short');
    });
  });

  describe('options', () => {
    it('options.temperature and options.maxTokens reach OpenAI; DEFAULT_TEMPERATURE when absent', async () => {
      const body = { message: 'be exact', mode: 'chat', provider: 'openai', apiKey: 'sk-test' };
      openai.enqueue({ kind: 'text', chunks: ['ok'] });
      expect((await svc.request('POST', '/api/unified/message', { json: { ...body, options: { temperature: 0.15, maxTokens: 42 } } })).status).toBe(200);
      const given = openai.chatRequests().at(-1)?.body;
      expect(given.temperature).toBe(0.15);
      expect(given.max_tokens ?? given.max_completion_tokens).toBe(42);

      openai.enqueue({ kind: 'text', chunks: ['ok'] });
      expect((await svc.request('POST', '/api/unified/message', { json: body })).status).toBe(200);
      const defaults = openai.chatRequests().at(-1)?.body;
      expect(defaults.temperature).toBe(0.3);
      expect(defaults.max_tokens).toBeUndefined();
      expect(defaults.max_completion_tokens).toBeUndefined();
    });

    it("options.temperature and options.maxTokens reach Ollama's options (temperature, num_predict); DEFAULT_TEMPERATURE when absent", async () => {
      // Ollama's /api/chat reads model parameters from `options` only; top-level fields are ignored.
      ollama.enqueue({ kind: 'text', chunks: ['ok'] });
      await send('be exact', { options: { temperature: 0.15, maxTokens: 42 } });
      const given = ollama.chatRequests().at(-1)?.body;
      expect(given.options).toMatchObject({ temperature: 0.15, num_predict: 42 });

      ollama.enqueue({ kind: 'text', chunks: ['ok'] });
      await send('be yourself');
      const defaults = ollama.chatRequests().at(-1)?.body;
      expect(defaults.options).toMatchObject({ temperature: 0.3 });
      expect(defaults.options.num_predict).toBeUndefined();
    });
  });
});
