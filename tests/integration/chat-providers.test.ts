import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider } from '../fakes/index.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { openSse, typesOf } from '../helpers/sse.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The same engine on all three providers (CONTRACT §1, §6, §7): exact event sequences, a tool
// round trip, the prompt order's effect on the request each provider receives, and the key rules.

type ProviderName = 'openai' | 'anthropic' | 'ollama';
const callerKey = 'sk-caller-7f3a9c';

/** The system prompt as each provider's wire format carries it. */
function systemPromptOf(provider: ProviderName, body: any): string {
  if (provider === 'anthropic') {
    return Array.isArray(body.system) ? body.system.map((part: { text: string }) => part.text).join('') : body.system;
  }
  const system = body.messages.find((message: { role: string }) => message.role === 'system');
  return system.content;
}

/** Whether the follow-up request carries the tool's result for `callId` (each provider's format). */
function carriesToolResult(provider: ProviderName, body: any, callId: string, text: string): boolean {
  const json = JSON.stringify(body);
  if (provider === 'openai') {
    return body.messages.some((message: any) => message.role === 'tool' && message.tool_call_id === callId && message.content.includes(text));
  }
  if (provider === 'anthropic') {
    return body.messages.some(
      (message: any) =>
        Array.isArray(message.content) &&
        message.content.some((block: any) => block.type === 'tool_result' && block.tool_use_id === callId && JSON.stringify(block.content).includes(text)),
    );
  }
  return body.messages.some((message: any) => message.role === 'tool' && String(message.content).includes(text)) && json.includes('list_files');
}

describe.each<ProviderName>(['openai', 'anthropic', 'ollama'])('chat through %s', (provider) => {
  let fake: FakeProvider;
  let service: TestService;
  let workspace: Folder;
  const keyBody = provider === 'ollama' ? {} : { apiKey: callerKey };

  beforeAll(async () => {
    fake = provider === 'openai' ? await startFakeOpenAI() : provider === 'anthropic' ? await startFakeAnthropic() : await startFakeOllama({ models: ['ollama-model'] });
    workspace = makeFolder();
    workspace.file('notes.txt', 'remember the milk\n');
    const base = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL', ollama: 'OLLAMA_BASE_URL' }[provider];
    service = await startTestService('sqlite', { [base]: fake.url, AI_MODEL_PROVIDER: provider, AI_MODEL_NAME: `${provider}-model` });
    const added = await service.request('POST', '/api/workspaces/add', { json: { name: 'fixture', path: workspace.path } });
    expect(added.status).toBe(200);
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await fake.close();
    workspace[Symbol.dispose]();
  });

  it('streams text as text events, then context_update and done, and stores the exchange', async () => {
    fake.reset();
    fake.enqueue({ kind: 'text', chunks: ['One', ' two', ' three'], usage: { input: 11, output: 3 } });
    const stream = await openSse(`${service.url}/api/${provider}/stream`, { json: { message: 'Count', mode: 'chat', ...keyBody } });
    expect(stream.status).toBe(200);
    const events = await stream.events();
    expect(typesOf(events)).toEqual(['text', 'text', 'text', 'context_update', 'done']);
    expect(events.slice(0, 3).map((event) => event.data.content).join('')).toBe('One two three');
    expect(events[4]?.data.metadata).toMatchObject({
      provider,
      model: `${provider}-model`,
      finishReason: 'stop',
      usage: { inputTokens: 11, outputTokens: 3 },
    });
    const upstream = fake.chatRequests()[0];
    expect(JSON.stringify(upstream?.body)).toContain(`${provider}-model`);
    if (provider !== 'ollama') expect(JSON.stringify(upstream?.headers)).toContain(callerKey);
    const conversation = await service.request('GET', `/api/conversation/${events[4]?.data.metadata.conversationId}`);
    expect(conversation.body.messages.slice(-2)).toMatchObject([
      { role: 'user', content: 'Count' },
      { role: 'assistant', content: 'One two three', provider, model: `${provider}-model`, finishReason: 'stop' },
    ]);
  });

  it('runs a tool loop: tool_call and tool_result with the same id, the result sent back, then the answer', async () => {
    fake.reset();
    fake.enqueue(
      { kind: 'tools', calls: [{ id: 'call_files_1', name: 'list_files', arguments: { path: '.' } }] },
      { kind: 'text', chunks: ['There is ', 'notes.txt'] },
    );
    const stream = await openSse(`${service.url}/api/${provider}/stream`, { json: { message: 'What files?', ...keyBody } });
    const events = await stream.events();
    expect(typesOf(events)).toEqual(['tool_call', 'tool_result', 'text', 'text', 'context_update', 'done']);
    const [call, result] = events;
    expect(call?.data).toMatchObject({ type: 'tool_call', name: 'list_files', params: { path: '.' } });
    expect(result?.data).toMatchObject({ type: 'tool_result', name: 'list_files', id: call?.data.id });
    expect(JSON.stringify(result?.data.result)).toContain('notes.txt');
    expect(events.at(-1)?.data.metadata.finishReason).toBe('stop');
    const [first, second] = fake.chatRequests();
    expect(JSON.stringify(first?.body)).toContain('read_file');
    expect(carriesToolResult(provider, second?.body, call?.data.id, 'notes.txt')).toBe(true);
    const stored = await service.request('GET', `/api/conversation/${events.at(-1)?.data.metadata.conversationId}`);
    expect(stored.body.messages.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'There is notes.txt',
      toolCalls: [{ id: call?.data.id, name: 'list_files', params: { path: '.' } }],
    });
  });

  it('builds the system prompt from the selected prompt order, in its order', async () => {
    fake.reset();
    const inline = {
      name: 'custom first',
      sections: [
        { type: 'custom', content: 'CUSTOM RULES' },
        { type: 'system', content: 'SYSTEM TEXT' },
        { type: 'workspace_context', enabled: false },
        { type: 'conversation_history' },
        { type: 'user_message' },
      ],
    };
    await (await openSse(`${service.url}/api/${provider}/stream`, { json: { message: 'a', mode: 'chat', promptOrders: { order: inline }, ...keyBody } })).events();
    expect(systemPromptOf(provider, fake.chatRequests()[0]?.body)).toBe('CUSTOM RULES\n\nSYSTEM TEXT');

    const saved = await service.request('POST', '/api/prompt-orders', {
      json: { order: { name: 'stored', sections: [{ type: 'system', content: 'STORED' }, { type: 'tools' }, { type: 'conversation_history' }, { type: 'user_message' }] } },
    });
    await (await openSse(`${service.url}/api/${provider}/stream`, { json: { message: 'b', mode: 'chat', promptOrders: { orderId: saved.body.orderId }, ...keyBody } })).events();
    expect(systemPromptOf(provider, fake.chatRequests()[1]?.body)).toBe('STORED\n\nNo tools are available in this conversation.');

    // The built-in default: system, workspace_context, tools (assistant mode offers the read-only tools).
    await (await openSse(`${service.url}/api/${provider}/stream`, { json: { message: 'c', ...keyBody } })).events();
    const builtIn = systemPromptOf(provider, fake.chatRequests()[2]?.body);
    expect(builtIn.indexOf('Active workspace: fixture')).toBeGreaterThan(0);
    expect(builtIn.indexOf('- list_files:')).toBeGreaterThan(builtIn.indexOf('Active workspace: fixture'));
    expect(builtIn).toContain('notes.txt');

    const unknown = await service.request('POST', `/api/${provider}/message`, {
      json: { message: 'd', promptOrders: { orderId: '00000000-0000-4000-8000-000000000000' }, ...keyBody },
    });
    expect(unknown.status).toBe(400);
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it('answers the non-streaming path with the collected events', async () => {
    fake.reset();
    fake.enqueue({ kind: 'text', chunks: ['Plain', ' reply'] });
    const reply = await service.request('POST', `/api/${provider}/message`, { json: { message: 'JSON please', mode: 'chat', ...keyBody } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ success: true, response: 'Plain reply', provider, model: `${provider}-model` });
    expect(reply.body.context.conversationId).toBe(reply.body.conversation_id);
    expect(reply.text).not.toContain(callerKey);
  });
});

describe('API keys and model names (CONTRACT §1, §6)', () => {
  let openai: FakeProvider;
  let service: TestService;

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    service = await startTestService('sqlite', { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk-server-key' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await openai.close();
  });

  it('requires the caller key on /api/openai/* and /api/anthropic/*', async () => {
    for (const provider of ['openai', 'anthropic']) {
      const reply = await service.request('POST', `/api/${provider}/message`, { json: { message: 'hi' } });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_REQUEST');
    }
    expect(openai.chatRequests()).toHaveLength(0);
  });

  it('uses the server key on the unified and plain paths when none is sent, and 400 when there is none at all', async () => {
    openai.reset();
    const unified = await service.request('POST', '/api/unified/message', { json: { provider: 'openai', message: 'hi', mode: 'chat' } });
    expect(unified.status).toBe(200);
    expect(unified.body).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai', response: 'Hello from fake' });
    expect(openai.chatRequests()[0]?.headers.authorization).toBe('Bearer sk-server-key');
    const plain = await service.request('POST', '/api/message', { json: { model: 'openai/gpt-4.1', message: 'hi', mode: 'chat', apiKey: 'sk-mine' } });
    expect(plain.status).toBe(200);
    expect(plain.body.model).toBe('gpt-4.1');
    expect(openai.chatRequests()[1]?.headers.authorization).toBe('Bearer sk-mine');
    const noKey = await service.request('POST', '/api/unified/message', { json: { provider: 'anthropic', message: 'hi' } });
    expect(noKey.status).toBe(400);
    expect(noKey.body.error.details).toMatchObject({ field: 'apiKey' });
  });

  it('refuses an unknown provider and a model of another provider', async () => {
    const unknown = await service.request('POST', '/api/unified/message', { json: { provider: 'gemini', message: 'hi' } });
    expect(unknown.status).toBe(400);
    const mismatch = await service.request('POST', '/api/openai/message', { json: { model: 'anthropic/claude-x', message: 'hi', apiKey: 'k' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.message).toContain('anthropic');
  });

  it('refuses a message longer than MAX_MESSAGE_LENGTH and an empty one', async () => {
    const long = await service.request('POST', '/api/message', { json: { message: 'x'.repeat(100_001) } });
    expect(long.status).toBe(400);
    expect(long.body.error.details.issues[0].path).toEqual(['message']);
    expect((await service.request('POST', '/api/message', { json: { message: '' } })).status).toBe(400);
  });
});
