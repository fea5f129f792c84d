import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, stepCountIs, streamText, tool, type LanguageModel, type ModelMessage } from 'ai';
import { Ollama } from 'ollama';
import { createOllama } from 'ollama-ai-provider-v2';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider, type Script } from '../fakes/index.js';
import { waitFor } from '../helpers/wait-for.js';

// The fakes stand in for the model providers in every other integration test, so these tests hold
// them to independent real clients: the AI SDK providers and the ollama npm client parse what they
// send. (The service's own wire clients, src/core/providers/, are then tested against the fakes;
// the AI SDK is a dev dependency for this check only.)

const KEY = 'sk-fake-key';
let openai: FakeProvider;
let anthropic: FakeProvider;
let ollama: FakeOllama;

beforeAll(async () => {
  [openai, anthropic, ollama] = await Promise.all([startFakeOpenAI({ apiKey: KEY }), startFakeAnthropic({ apiKey: KEY }), startFakeOllama()]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close(), ollama.close()]);
});
beforeEach(() => {
  for (const fake of [openai, anthropic, ollama]) fake.reset();
});

interface ProviderCase {
  name: 'openai' | 'anthropic' | 'ollama';
  fake: () => FakeProvider;
  model: () => LanguageModel;
  /** Where the request body says whether it streams. */
  streamFlag: (body: any) => unknown;
  /** The tool call and its result as the follow-up request carries them, in this provider's format. */
  expectToolRoundTrip: (body: any) => void;
}

const providers: ProviderCase[] = [
  {
    name: 'openai',
    fake: () => openai,
    model: () => createOpenAI({ baseURL: openai.url, apiKey: KEY }).chat('gpt-4o-mini'),
    streamFlag: (body) => body.stream,
    expectToolRoundTrip: (body) => {
      expect(body.messages).toContainEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' } }],
      });
      expect(body.messages).toContainEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"city":"Paris","forecast":"sunny"}' });
    },
  },
  {
    name: 'anthropic',
    fake: () => anthropic,
    model: () => createAnthropic({ baseURL: anthropic.url, apiKey: KEY })('claude-sonnet-4-20250514'),
    streamFlag: (body) => body.stream,
    expectToolRoundTrip: (body) => {
      expect(body.messages).toContainEqual({
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } }],
      });
      expect(body.messages).toContainEqual({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"city":"Paris","forecast":"sunny"}' }],
      });
    },
  },
  {
    name: 'ollama',
    fake: () => ollama,
    model: () => createOllama({ baseURL: `${ollama.origin}/api` })('llama3.2'),
    streamFlag: (body) => body.stream,
    expectToolRoundTrip: (body) => {
      // Ollama has no call ids, so the SDK makes one up and pairs the result with it.
      const assistant = body.messages.find((m: any) => m.role === 'assistant');
      expect(assistant.tool_calls).toEqual([
        { id: expect.any(String), type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } },
      ]);
      expect(body.messages).toContainEqual({ role: 'tool', tool_call_id: assistant.tool_calls[0].id, content: '{"city":"Paris","forecast":"sunny"}' });
    },
  },
];

const weatherTools = {
  get_weather: tool({
    description: 'Weather for a city',
    inputSchema: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }),
    execute: ({ city }) => Promise.resolve({ city, forecast: 'sunny' }),
  }),
};

const prompt: ModelMessage[] = [{ role: 'user', content: 'Hi' }];

/**
 * Runs a stream to its end and sorts out what arrived. Errors come two ways: an `error` part (the
 * request failed, or the provider sent an error event), or a throw out of the iteration (the
 * connection broke while the body was being read); `thrown` tells them apart.
 */
async function drain(options: { model: LanguageModel; abortSignal?: AbortSignal; onText?: (text: string) => void }) {
  const result = streamText({ ...options, messages: prompt, maxRetries: 0, onError: () => {} });
  const seen = { texts: [] as string[], errors: [] as unknown[], thrown: undefined as unknown, aborted: false, finish: undefined as any };
  try {
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') {
        seen.texts.push(part.text);
        options.onText?.(part.text);
      } else if (part.type === 'error') seen.errors.push(part.error);
      else if (part.type === 'abort') seen.aborted = true;
      else if (part.type === 'finish') seen.finish = part;
    }
  } catch (error) {
    seen.thrown = error;
  }
  return seen;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe.each(providers)('$name fake with the AI SDK', (provider) => {
  const fake = () => provider.fake();

  it('streams text chunks in order, with usage', async () => {
    fake().enqueue({ kind: 'text', chunks: ['Alpha', ' beta', ' gamma'], chunkDelayMs: 5, usage: { input: 7, output: 3 } });
    const seen = await drain({ model: provider.model() });
    expect(seen.errors).toEqual([]);
    expect(seen.texts).toEqual(['Alpha', ' beta', ' gamma']);
    expect(seen.finish.finishReason).toBe('stop');
    expect(seen.finish.totalUsage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    const [request] = fake().chatRequests();
    expect(provider.streamFlag(request?.body)).toBe(true);
    expect(request?.finishedAt).toBeGreaterThanOrEqual(request?.receivedAt ?? Infinity);
  });

  it('answers a non-streaming request with one object', async () => {
    fake().enqueue({ kind: 'text', chunks: ['Cut ', 'short'], finishReason: 'length', usage: { input: 4, output: 2 } });
    const result = await generateText({ model: provider.model(), messages: prompt, maxRetries: 0 });
    expect(result.text).toBe('Cut short');
    expect(result.finishReason).toBe('length');
    expect(result.usage).toMatchObject({ inputTokens: 4, outputTokens: 2 });
    expect(provider.streamFlag(fake().chatRequests()[0]?.body)).not.toBe(true);
  });

  it.each(['stream', 'generate'] as const)('round-trips a tool call (%s)', async (mode) => {
    fake().enqueue(
      { kind: 'tools', calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } }] },
      { kind: 'text', chunks: ['Sunny', ' in Paris.'] },
    );
    const options = { model: provider.model(), messages: prompt, tools: weatherTools, stopWhen: stepCountIs(3), maxRetries: 0 };
    const result = mode === 'stream' ? streamText({ ...options, onError: () => {} }) : await generateText(options);
    const steps = await result.steps;
    expect(steps[0]?.toolCalls).toMatchObject([{ toolName: 'get_weather', input: { city: 'Paris', unit: 'celsius' } }]);
    expect(steps[0]?.finishReason).toBe('tool-calls');
    expect(await result.text).toBe('Sunny in Paris.');
    const requests = fake().chatRequests();
    expect(requests).toHaveLength(2);
    provider.expectToolRoundTrip(requests[1]?.body);
  });

  it('sends raw tool arguments as they are, so the client sees them invalid', async () => {
    fake().enqueue({ kind: 'tools', calls: [{ id: 'call_bad', name: 'get_weather', arguments: '{"city": "Par' }] });
    const run = generateText({ model: provider.model(), messages: prompt, tools: weatherTools, maxRetries: 0 });
    if (provider.name === 'ollama') {
      // Ollama's arguments are an object on the wire; a string fails the client's response schema.
      await expect(run).rejects.toBeInstanceOf(APICallError);
      return;
    }
    const { content } = await run;
    const invalidCall = { type: 'tool-call', toolName: 'get_weather', invalid: true, error: expect.objectContaining({ name: 'AI_InvalidToolInputError' }) };
    expect(content).toContainEqual(expect.objectContaining(invalidCall));
  });

  it.each([401, 429, 500])('surfaces a %i as an APICallError with that status', async (status) => {
    fake().enqueue({ kind: 'fail', status }, { kind: 'fail', status });
    const thrown = await rejection(generateText({ model: provider.model(), messages: prompt, maxRetries: 0 }));
    expect(thrown).toBeInstanceOf(APICallError);
    expect((thrown as APICallError).statusCode).toBe(status);
    // The body is the provider's own error shape, which the provider's client reads its message from.
    const body = JSON.parse((thrown as APICallError).responseBody ?? '');
    if (provider.name === 'openai') expect((thrown as APICallError).message).toBe(body.error.message);
    if (provider.name === 'anthropic') expect((thrown as APICallError).message).toBe(body.error.message);
    if (provider.name === 'ollama') expect(body).toEqual({ error: expect.any(String) });

    const streamed = await drain({ model: provider.model() });
    expect(streamed.errors).toHaveLength(1);
    expect((streamed.errors[0] as APICallError).statusCode).toBe(status);
  });

  it('passes scripted headers and bodies through a failure', async () => {
    fake().enqueue({ kind: 'fail', status: 503, body: '<html>bad gateway</html>', headers: { 'retry-after': '7' } });
    const thrown = (await rejection(generateText({ model: provider.model(), messages: prompt, maxRetries: 0 }))) as APICallError;
    expect(thrown.statusCode).toBe(503);
    expect(thrown.responseBody).toBe('<html>bad gateway</html>');
    expect(thrown.responseHeaders?.['retry-after']).toBe('7');
  });

  it('surfaces a connection cut mid-stream as an error, after the chunks that arrived', async () => {
    fake().enqueue({ kind: 'cut', chunks: ['one', ' two', ' three'], after: 2 });
    const seen = await drain({ model: provider.model() });
    expect(seen.texts).toEqual(['one', ' two']);
    expect(seen.errors).toEqual([]);
    expect(seen.thrown).toBeInstanceOf(Error);
    expect(seen.finish).toBeUndefined();
    expect(fake().chatRequests()[0]?.closedAt).toBeUndefined();
  });

  it('surfaces a cut non-streaming body as an error', async () => {
    fake().enqueue({ kind: 'cut', chunks: ['one', ' two'], after: 1 });
    await expect(generateText({ model: provider.model(), messages: prompt, maxRetries: 0 })).rejects.toThrow();
  });

  it('surfaces a refused connection as an error', async () => {
    fake().enqueue({ kind: 'refuse' });
    await expect(generateText({ model: provider.model(), messages: prompt, maxRetries: 0 })).rejects.toThrow();
    expect(fake().chatRequests()).toHaveLength(1);
  });

  it('rejects a malformed non-streaming body', async () => {
    fake().enqueue({ kind: 'malformed' });
    await expect(generateText({ model: provider.model(), messages: prompt, maxRetries: 0 })).rejects.toThrow();
  });

  it('sends a malformed stream that yields no text', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    fake().enqueue({ kind: 'malformed' });
    const seen = await drain({ model: provider.model() });
    warn.mockRestore();
    expect(seen.texts.join('')).toBe('');
    // ollama-ai-provider-v2 only logs unparsable NDJSON lines and ends the stream as if it were
    // complete, with finish reason 'other'; the SSE providers report an error.
    if (provider.name === 'ollama') expect(seen.finish.finishReason).toBe('other');
    else expect(seen.errors.length).toBeGreaterThan(0);
  });

  it('records closedAt when an abort ends a stalled request', async () => {
    fake().enqueue({ kind: 'stall' });
    const controller = new AbortController();
    const running = drain({ model: provider.model(), abortSignal: controller.signal });
    await fake().waitForChatRequests(1);
    controller.abort();
    const seen = await running;
    expect(seen.aborted || seen.errors.length > 0).toBe(true);
    const closed = await fake().waitForClientClose(0);
    expect(closed.closedAt).toBeGreaterThanOrEqual(closed.receivedAt);
    expect(closed.finishedAt).toBeUndefined();
  });

  it('records closedAt when an abort ends a stream midway', async () => {
    fake().enqueue({ kind: 'text', chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const seen = await drain({
      model: provider.model(),
      abortSignal: controller.signal,
      onText: () => {
        controller.abort();
      },
    });
    expect(seen.texts).toEqual(['a']);
    expect(seen.aborted).toBe(true);
    await fake().waitForClientClose(0);
  });
});

describe('key checks', () => {
  it('answers OpenAI requests with a wrong key with 401 invalid_api_key, and lists models with the right one', async () => {
    const thrown = (await rejection(
      generateText({ model: createOpenAI({ baseURL: openai.url, apiKey: 'sk-wrong' }).chat('gpt-4o-mini'), prompt: 'Hi', maxRetries: 0 }),
    )) as APICallError;
    expect(thrown.statusCode).toBe(401);
    expect(JSON.parse(thrown.responseBody ?? '').error.code).toBe('invalid_api_key');
    const models = await fetch(`${openai.url}/models`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(await models.json()).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'system' }, { id: 'gpt-4o' }] });
    expect((await fetch(`${openai.url}/models`)).status).toBe(401);
  });

  it('answers Anthropic requests with a wrong key with 401 authentication_error, and lists models with the right one', async () => {
    const thrown = (await rejection(
      generateText({ model: createAnthropic({ baseURL: anthropic.url, apiKey: 'wrong' })('claude-sonnet-4-20250514'), prompt: 'Hi', maxRetries: 0 }),
    )) as APICallError;
    expect(thrown.statusCode).toBe(401);
    expect(JSON.parse(thrown.responseBody ?? '').error.type).toBe('authentication_error');
    const headers = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' };
    const models: any = await (await fetch(`${anthropic.url}/models`, { headers })).json();
    expect(models).toMatchObject({ has_more: false, first_id: 'claude-sonnet-4-20250514', last_id: 'claude-3-5-haiku-20241022' });
    expect(models.data[0]).toEqual({ type: 'model', id: 'claude-sonnet-4-20250514', display_name: expect.any(String), created_at: expect.any(String) });
  });

  it('records what the SDK sends as credentials', async () => {
    await generateText({ model: createAnthropic({ baseURL: anthropic.url, apiKey: KEY })('claude-sonnet-4-20250514'), prompt: 'Hi', maxRetries: 0 });
    await generateText({ model: createOpenAI({ baseURL: openai.url, apiKey: KEY }).chat('gpt-4o-mini'), prompt: 'Hi', maxRetries: 0 });
    expect(anthropic.chatRequests()[0]?.headers).toMatchObject({ 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
    expect(openai.chatRequests()[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe('raw wire format', () => {
  const post = (url: string, body: object, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const toolScript: Script = { kind: 'tools', calls: [{ id: 'call_9', name: 'lookup', arguments: { query: 'fakes' } }] };

  it('streams OpenAI tool calls as an opening delta and argument fragments, then usage and [DONE]', async () => {
    openai.enqueue(toolScript);
    const res = await post(`${openai.url}/chat/completions`, { model: 'm', stream: true, stream_options: { include_usage: true } }, { authorization: `Bearer ${KEY}` });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.replace(/^data: /, '')));
    expect(chunks[0].choices[0].delta).toMatchObject({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_9', type: 'function', function: { name: 'lookup', arguments: '' } }] });
    const pieces = chunks.flatMap((c) => c.choices.flatMap((choice: any) => choice.delta.tool_calls ?? [])).slice(1);
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    expect(pieces.map((p: any) => p.function.arguments).join('')).toBe('{"query":"fakes"}');
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
  });

  it('streams Anthropic events in the documented order, with a ping', async () => {
    anthropic.enqueue({ ...toolScript, text: 'Looking.' });
    const res = await post(`${anthropic.url}/messages`, { model: 'm', stream: true }, { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' });
    const names = [...(await res.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(names).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const missingVersion = await post(`${anthropic.url}/messages`, { model: 'm' }, { 'x-api-key': KEY });
    expect(missingVersion.status).toBe(400);
  });

  it('streams Ollama NDJSON ending in a done line, and refuses models that are not installed', async () => {
    ollama.enqueue(toolScript);
    const res = await post(`${ollama.origin}/api/chat`, { model: 'llama3.2', messages: [] });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text()).trim().split('\n').map((line) => JSON.parse(line));
    expect(lines[0].message.tool_calls).toEqual([{ function: { name: 'lookup', arguments: { query: 'fakes' } } }]);
    expect(lines.at(-1)).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: 1 });
    const missing = await post(`${ollama.origin}/api/chat`, { model: 'qwen3:8b', messages: [] });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'model "qwen3:8b" not found, try pulling it first' });
    expect(ollama.chatRequests()).toHaveLength(2);
  });
});

describe('Ollama model management with the ollama client', () => {
  const client = () => new Ollama({ host: ollama.origin });

  it('lists installed models', async () => {
    const { models } = await client().list();
    expect(models).toEqual([
      expect.objectContaining({ name: 'llama3.2:latest', model: 'llama3.2:latest', digest: expect.stringMatching(/^[0-9a-f]{64}$/) }),
    ]);
    expect(models[0]?.details).toMatchObject({ format: 'gguf', family: 'llama', parameter_size: '3.2B' });
    expect(await client().version()).toEqual({ version: '0.12.0' });
  });

  it('pulls with streamed progress, then lists the model under its :latest name', async () => {
    const progress = await client().pull({ model: 'mistral', stream: true });
    const lines = [];
    for await (const line of progress) lines.push(line);
    expect(lines.map((l) => l.status.replace(/ sha256:.*/, ''))).toEqual([
      'pulling manifest',
      ...Array<string>(ollama.pullSettings.steps).fill('downloading'),
      'verifying sha256 digest',
      'writing manifest',
      'success',
    ]);
    const completed = lines.filter((l) => l.status.startsWith('downloading')).map((l) => l.completed);
    expect(completed).toEqual([...completed].sort((a, b) => a - b));
    expect(completed.at(-1)).toBe(ollama.pullSettings.totalBytes);
    expect(ollama.installed.has('mistral:latest')).toBe(true);
    expect((await client().list()).models.map((m) => m.name)).toContain('mistral:latest');
    ollama.installed.delete('mistral:latest');
  });

  it('pulls without streaming and answers once', async () => {
    expect(await client().pull({ model: 'phi4-mini:3.8b' })).toEqual({ status: 'success' });
    expect(ollama.installed.delete('phi4-mini:3.8b')).toBe(true);
  });

  it('reports a model the registry does not have', async () => {
    const streamed = await client().pull({ model: 'missing-model', stream: true });
    await expect(
      (async () => {
        for await (const _line of streamed) {
          // drained for the error line
        }
      })(),
    ).rejects.toThrow('pull model manifest: file does not exist');
    await expect(client().pull({ model: 'missing-model' })).rejects.toMatchObject({ status_code: 500 });
    expect(ollama.installed.has('missing-model:latest')).toBe(false);
  });

  it('installs nothing when the client abandons a pull', async () => {
    const progress = await client().pull({ model: 'gemma3:1b', stream: true });
    await expect(
      (async () => {
        for await (const line of progress) if (line.status.startsWith('downloading')) progress.abort();
      })(),
    ).rejects.toThrow();
    const pull = await waitFor(() => ollama.requests.find((r) => r.path === '/api/pull' && r.closedAt !== undefined));
    expect(pull.body).toMatchObject({ name: 'gemma3:1b', stream: true });
    await new Promise((resolve) => setTimeout(resolve, ollama.pullSettings.stepDelayMs * (ollama.pullSettings.steps + 2)));
    expect(ollama.installed.has('gemma3:1b')).toBe(false);
  });

  it('shows and deletes models, with 404 for unknown ones', async () => {
    ollama.installed.add('tinyllama:latest');
    const shown = await client().show({ model: 'tinyllama' });
    expect(shown.capabilities).toEqual(['completion', 'tools']);
    expect(shown.model_info).toMatchObject({ 'general.architecture': 'llama', 'llama.context_length': 131072 });
    expect(await client().delete({ model: 'tinyllama' })).toEqual({ status: 'success' });
    expect(ollama.installed.has('tinyllama:latest')).toBe(false);
    await expect(client().delete({ model: 'tinyllama' })).rejects.toMatchObject({ status_code: 404, error: "model 'tinyllama' not found" });
    await expect(client().show({ model: 'tinyllama' })).rejects.toMatchObject({ status_code: 404 });
  });
});

describe('fake server core', () => {
  it('closes with a stalled request open', async () => {
    const fake = await startFakeOpenAI();
    fake.setDefault({ kind: 'stall' });
    const pending = fetch(`${fake.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' }).catch((e: unknown) => e);
    await fake.waitForChatRequests(1);
    const started = performance.now();
    await fake.close();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await pending).toBeInstanceOf(Error);
    // close() destroyed the socket; that is not the client hanging up.
    expect(fake.chatRequests()[0]?.closedAt).toBeUndefined();
  });

  it('consumes queued scripts in order, then the default, and rejects a wait that times out', async () => {
    await using fake = await startFakeOllama();
    fake.enqueue({ kind: 'text', chunks: ['first'] }, { kind: 'fail', status: 500 });
    const model = createOllama({ baseURL: `${fake.origin}/api` })('llama3.2');
    expect((await generateText({ model, prompt: 'a', maxRetries: 0 })).text).toBe('first');
    await expect(generateText({ model, prompt: 'b', maxRetries: 0 })).rejects.toBeInstanceOf(APICallError);
    expect((await generateText({ model, prompt: 'c', maxRetries: 0 })).text).toBe('Hello from fake');
    fake.setDefault({ kind: 'text', chunks: ['changed'] });
    fake.reset();
    expect(fake.requests).toEqual([]);
    expect((await generateText({ model, prompt: 'd', maxRetries: 0 })).text).toBe('changed');
    await expect(fake.waitForChatRequests(5, 50)).rejects.toThrow('timed out');
  });
});
