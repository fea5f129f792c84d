import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §10: /v1/chat/completions and /v1/models in OpenAI's wire format, driven by the
// official `openai` SDK against the fake providers: whole and streamed completions, the caller's
// tool calls handed back (never run), OpenAI's error object with the contract's statuses, and
// each exchange stored as a conversation of the caller.

const upstreamKey = 'sk-upstream-5d1e';
const anthropicKey = 'sk-ant-caller-88';

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** The body of the `index`th chat request a fake received (a failed assertion when there is none). */
function upstreamBody(fake: FakeProvider, index = 0): any {
  const request = fake.chatRequests()[index];
  if (request === undefined) throw new Error(`no chat request ${index} reached the provider`);
  return request.body;
}

/** The SDK's failure for a request, for asserting on its status and error object. */
async function failureOf(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

// Each exchange is stored, so the storage-facing suite runs on both databases.
describeOnDatabases('OpenAI-compatible API with auth off', (kind) => {
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let ollama: FakeProvider;
  let service: TestService;
  let client: OpenAI;

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: upstreamKey });
    anthropic = await startFakeAnthropic({ apiKey: anthropicKey });
    ollama = await startFakeOllama({ models: ['llama3.2', 'qwen2.5'] });
    service = await startTestService(kind, {
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      OLLAMA_BASE_URL: ollama.url,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
    });
    // With auth off the SDK's apiKey (its Bearer token) is the provider key.
    client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: upstreamKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await Promise.all([openai.close(), anthropic.close(), ollama.close()]);
  });

  it('answers a whole chat.completion, sends the caller’s conversation as it is, and stores the exchange', async () => {
    openai.reset();
    openai.enqueue({ kind: 'text', chunks: ['Hello', ' there'], usage: { input: 7, output: 2 } });
    const { data: completion, response } = await client.chat.completions
      .create({
        model: 'openai/gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello! What now?' },
          { role: 'user', content: [{ type: 'text', text: 'Greet me' }] },
        ],
        temperature: 0.3,
        max_completion_tokens: 50,
      })
      .withResponse();
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'openai/gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(Number.isInteger(completion.created)).toBe(true);

    const [upstream] = openai.chatRequests();
    const body = upstreamBody(openai);
    expect(upstream?.headers.authorization).toBe(`Bearer ${upstreamKey}`);
    expect(body.model).toBe('gpt-4o-mini');
    // Exactly the caller's messages: no prompt order, no workspace text, none of the service's tools.
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! What now?' },
      { role: 'user', content: 'Greet me' },
    ]);
    expect(body.tools).toBeUndefined();
    expect(body.temperature).toBe(0.3);
    expect(body.max_tokens).toBe(50);

    const conversationId = response.headers.get('x-conversation-id');
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await service.request('GET', '/api/conversations');
    expect(listed.body.conversations.map((conversation: { id: string }) => conversation.id)).toContain(conversationId);
    const stored = await service.request('GET', `/api/conversation/${conversationId}`);
    expect(stored.body.messages).toMatchObject([
      { role: 'system', content: 'Be brief' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! What now?' },
      { role: 'user', content: 'Greet me' },
      { role: 'assistant', content: 'Hello there', provider: 'openai', model: 'gpt-4o-mini', finishReason: 'stop' },
    ]);
    expect(stored.body.conversation.title).toBe('Hi');
  });

  it('streams chat.completion.chunk deltas with the usage chunk and ends with [DONE]', async () => {
    ollama.reset();
    ollama.enqueue({ kind: 'text', chunks: ['One', ' two', ' three'], usage: { input: 5, output: 3 } });
    const stream = await client.chat.completions.create({
      model: 'ollama/llama3.2',
      messages: [{ role: 'user', content: 'Count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(new Set(chunks.map((chunk) => chunk.object))).toEqual(new Set(['chat.completion.chunk']));
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('One two three');
    const finishing = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finishing.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(chunks.at(-2)?.usage).toBeNull();
    const upstream = upstreamBody(ollama);
    expect(upstream.model).toBe('llama3.2');
    expect(upstream.messages).toEqual([{ role: 'user', content: 'Count' }]);
  });

  it('writes the stream exactly as OpenAI does: data lines, no usage unless asked, data: [DONE] last', async () => {
    ollama.reset();
    ollama.enqueue({ kind: 'text', chunks: ['A', 'B'] });
    const reply = await fetch(`${service.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama3.2', stream: true, max_tokens: 9, messages: [{ role: 'user', content: 'Letters' }] }),
    });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await reply.text();
    const frames = text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)));
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    // A bare model name belongs to the active model's provider.
    expect(chunks[0].model).toBe('ollama/llama3.2');
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('AB');
    expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(upstreamBody(ollama).options.num_predict).toBe(9);
  });

  it('hands the model’s tool calls back unrun, then takes the tool result in the next request', async () => {
    openai.reset();
    openai.enqueue(
      { kind: 'tools', calls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } }], usage: { input: 20, output: 6 } },
      { kind: 'text', chunks: ['It is sunny in Paris'] },
    );
    const asked = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [weatherTool],
    });
    const choice = asked.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toEqual([{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    // Not run by the service: one model call, which offered the caller's tool and none of ours.
    expect(openai.chatRequests()).toHaveLength(1);
    const offered = upstreamBody(openai).tools.map((tool: any) => tool.function.name);
    expect(offered).toEqual(['get_weather']);

    const answered = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: choice?.message.tool_calls ?? [] },
        { role: 'tool', tool_call_id: 'call_w1', content: 'Sunny, 22C' },
      ],
      tools: [weatherTool],
    });
    expect(answered.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'It is sunny in Paris' } });
    const followUp = upstreamBody(openai, 1);
    expect(followUp.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      // The caller's text goes on as it is, not quoted as JSON a second time.
      { role: 'tool', tool_call_id: 'call_w1', content: 'Sunny, 22C' },
    ]);
  });

  it('streams tool calls as delta.tool_calls with finish_reason tool_calls (Anthropic upstream, key in X-Provider-Api-Key)', async () => {
    anthropic.reset();
    anthropic.enqueue({ kind: 'tools', text: 'Let me check.', calls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const viaHeader = new OpenAI({
      baseURL: `${service.url}/v1`,
      apiKey: 'not-the-provider-key',
      defaultHeaders: { 'X-Provider-Api-Key': anthropicKey },
      maxRetries: 0,
    });
    const stream = await viaHeader.chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'Use tools' },
        { role: 'user', content: 'Weather in Oslo?' },
      ],
      tools: [weatherTool],
      stream: true,
    });
    let content = '';
    const calls: { id?: string; name?: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      content += delta?.content ?? '';
      for (const part of delta?.tool_calls ?? []) {
        const call = (calls[part.index] ??= { arguments: '' });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name = part.function.name;
        call.arguments += part.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('Let me check.');
    expect(calls).toEqual([{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Oslo"}' }]);
    expect(finish).toBe('tool_calls');
    expect(anthropic.chatRequests()).toHaveLength(1);
    const upstream = anthropic.chatRequests()[0];
    expect(upstream?.headers['x-api-key']).toBe(anthropicKey);
    expect(upstreamBody(anthropic).system).toBe('Use tools');
    expect(upstreamBody(anthropic).tools.map((tool: any) => tool.name)).toEqual(['get_weather']);
  });

  it('takes a tool round trip to Ollama, naming each result after its call', async () => {
    ollama.reset();
    ollama.enqueue({ kind: 'text', chunks: ['Cold'] });
    const answer = await client.chat.completions.create({
      model: 'ollama/llama3.2',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
        { role: 'tool', tool_call_id: 'c9', content: '{"temp":-3}' },
      ],
      tools: [weatherTool],
    });
    expect(answer.choices[0]?.message.content).toBe('Cold');
    const sent = upstreamBody(ollama).messages;
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_name: 'get_weather', content: '{"temp":-3}' });
    expect(sent.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] });
  });

  it('lists models as OpenAI’s list object, named <provider>/<model>', async () => {
    const page = await client.models.list();
    const ids = page.data.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['ollama/llama3.2:latest', 'ollama/qwen2.5:latest', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5']));
    for (const model of page.data) {
      expect(model.object).toBe('model');
      expect(model.owned_by).toBe(model.id.split('/')[0]);
      expect(Number.isInteger(model.created)).toBe(true);
    }
    const raw = await service.request('GET', '/v1/models');
    expect(raw.body.object).toBe('list');
  });

  it('answers OpenAI’s error object with the contract’s statuses', async () => {
    const unknownProvider = await failureOf(client.chat.completions.create({ model: 'mistral/large', messages: [{ role: 'user', content: 'x' }] }));
    expect(unknownProvider.status).toBe(400);
    expect(unknownProvider.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'model' });
    expect(unknownProvider.message).toContain("Unknown provider 'mistral'");

    // No key anywhere: no X-Provider-Api-Key and no Bearer token.
    const noKey = await service.request('POST', '/v1/chat/completions', {
      json: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
    });
    expect(noKey.status).toBe(400);
    expect(noKey.body).toEqual({
      error: { message: expect.stringContaining('X-Provider-Api-Key'), type: 'invalid_request_error', param: 'apiKey', code: 'invalid_request' },
    });

    const invalid = await service.request('POST', '/v1/chat/completions', { json: { model: 'ollama/llama3.2', messages: [] } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
    expect(invalid.body.success).toBeUndefined();

    const image = await service.request('POST', '/v1/chat/completions', {
      json: { model: 'ollama/llama3.2', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
    });
    expect(image.status).toBe(400);
    expect(image.body.error.param).toMatch(/^messages\.0\.content/);

    const orphanResult = await service.request('POST', '/v1/chat/completions', {
      json: { model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nope', content: 'y' }] },
    });
    expect(orphanResult.status).toBe(400);
    expect(orphanResult.body.error.param).toBe('messages.1.tool_call_id');

    const notJson = await service.request('POST', '/v1/chat/completions', { body: '{oops', headers: { 'content-type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toBe('Malformed JSON body');

    const unknownPath = await service.request('GET', '/v1/embeddings');
    expect(unknownPath.status).toBe(404);
    expect(unknownPath.body).toEqual({ error: { message: 'Not found', type: 'not_found_error', param: null, code: 'not_found' } });
  });

  it.each([
    ['a NUL character', '{"city":"\\u0000"}', 'city must not contain NUL characters'],
    ['a lone surrogate', '{"city":"\\ud800"}', 'city must be well-formed Unicode'],
    ['a NUL in a key', '{"\\u0000":1}', 'must not contain NUL characters'],
    ['nesting past the depth limit', `{"city":${'['.repeat(80)}${']'.repeat(80)}}`, 'must not nest deeper than 64 levels'],
  ])('refuses tool call arguments that decode to %s with 400, before anything is stored or sent', async (_case, args, message) => {
    ollama.reset();
    const before = await service.request('GET', '/api/conversations');
    const reply = await service.request('POST', '/v1/chat/completions', {
      json: {
        model: 'ollama/llama3.2',
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: 'Looking', tool_calls: [{ id: 'call_ok', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
          { role: 'tool', tool_call_id: 'call_ok', content: 'rain' },
          { role: 'assistant', content: null, tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: args } },
          ] },
          { role: 'tool', tool_call_id: 'call_a', content: 'sun' },
          { role: 'tool', tool_call_id: 'call_b', content: 'snow' },
        ],
      },
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages.3.tool_calls.1.function.arguments' });
    expect(reply.body.error.message).toContain(message);
    expect(ollama.chatRequests()).toHaveLength(0);
    const after = await service.request('GET', '/api/conversations');
    expect(after.body.total).toBe(before.body.total);
  });

  it('maps provider failures: a rejected key → 400 without the key, a provider 429 → 429, a provider 503 before the stream → 503', async () => {
    const wrongKey = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: 'sk-wrong-key-123', maxRetries: 0 });
    openai.reset();
    const rejected = await failureOf(wrongKey.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    expect(rejected.status).toBe(400);
    expect(JSON.stringify(rejected.error)).not.toContain('sk-wrong-key-123');

    openai.enqueue({ kind: 'fail', status: 429, headers: { 'retry-after': '7' } });
    const limited = await failureOf(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    expect(limited.status).toBe(429);
    expect(limited.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });

    ollama.reset();
    ollama.enqueue({ kind: 'fail', status: 503 });
    const down = await failureOf(client.chat.completions.create({ model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'x' }], stream: true }));
    expect(down.status).toBe(503);
    expect(down.error).toMatchObject({ type: 'server_error', code: 'model_unavailable' });
  });

  it('does not take the caller’s current conversation away', async () => {
    const before = await service.request('GET', '/api/conversation/current');
    ollama.reset();
    const { response } = await client.chat.completions
      .create({ model: 'ollama/llama3.2', messages: [{ role: 'user', content: 'Side question' }] })
      .withResponse();
    const after = await service.request('GET', '/api/conversation/current');
    expect(before.body.conversation.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(after.body.conversation.id).toBe(before.body.conversation.id);
    expect(response.headers.get('x-conversation-id')).not.toBe(after.body.conversation.id);
  });
});

describe('OpenAI-compatible API with auth on', () => {
  let idp: TestIdentityProvider;
  let openai: FakeProvider;
  let service: TestService;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    openai = await startFakeOpenAI({ apiKey: upstreamKey });
    service = await startAuthService('sqlite', idp, { OPENAI_BASE_URL: openai.url, AI_MODEL_PROVIDER: 'openai', AI_MODEL_NAME: 'gpt-4o-mini' });
    idp.define('user', { sub: 'v1-user', roles: ['User'] });
    idp.define('nobody', { sub: 'v1-nobody', roles: [] });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
    await openai.close();
  });

  it('refuses a missing or bad token with 401 in OpenAI’s error object', async () => {
    const anonymous = await service.request('POST', '/v1/chat/completions', {
      json: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
      headers: { 'x-provider-api-key': upstreamKey },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });

    // The SDK's apiKey is the Bearer token: a provider key there is not an access token.
    const sdk = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: upstreamKey, maxRetries: 0 });
    const refused = await failureOf(sdk.models.list());
    expect(refused.status).toBe(401);
    expect(openai.chatRequests()).toHaveLength(0);
  });

  it('with the access token as apiKey and the provider key in X-Provider-Api-Key, answers and stores for that user', async () => {
    const token = await idp.tokenFor('user');
    const sdk = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: token, defaultHeaders: { 'X-Provider-Api-Key': upstreamKey }, maxRetries: 0 });
    openai.reset();
    openai.enqueue({ kind: 'text', chunks: ['Authorised'] });
    const { data: completion, response } = await sdk.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Who am I?' }] })
      .withResponse();
    expect(completion.choices[0]?.message.content).toBe('Authorised');
    // The access token never goes to the provider; the provider key does.
    expect(openai.chatRequests()[0]?.headers.authorization).toBe(`Bearer ${upstreamKey}`);
    const conversationId = response.headers.get('x-conversation-id');
    const mine = await requestAs(service, token, 'GET', '/api/conversations');
    expect(mine.body.conversations.map((conversation: { id: string }) => conversation.id)).toContain(conversationId);
  });

  it('without the provider key asks for X-Provider-Api-Key instead of using the access token', async () => {
    const token = await idp.tokenFor('user');
    const sdk = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: token, maxRetries: 0 });
    openai.reset();
    const missing = await failureOf(sdk.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    expect(missing.status).toBe(400);
    expect(missing.error).toMatchObject({ param: 'apiKey' });
    expect(openai.chatRequests()).toHaveLength(0);
  });

  it('a token without the role is refused with 403 permission_error', async () => {
    const token = await idp.tokenFor('nobody');
    const sdk = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: token, defaultHeaders: { 'X-Provider-Api-Key': upstreamKey }, maxRetries: 0 });
    const denied = await failureOf(sdk.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }));
    expect(denied.status).toBe(403);
    expect(denied.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
  });
});
