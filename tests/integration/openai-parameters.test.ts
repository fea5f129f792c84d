import OpenAI, { APIError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider } from '../fakes/index.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §12: OpenAI's parameters on /v1/chat/completions (and in the /api chat bodies'
// `options`) reach each provider in its own terms, or are refused with 400 naming them; none is
// dropped. Driven by the official `openai` SDK; the fakes record what each provider received.

const openAIKey = 'sk-caller-openai-1';
const anthropicKey = 'sk-ant-caller-2';

const Weather = z.object({ city: z.string(), celsius: z.number() });
const weatherAnswer = { city: 'Paris', celsius: 21 };

const lookupTool = {
  type: 'function' as const,
  function: { name: 'lookup', description: 'Looks a city up', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const otherTool = { type: 'function' as const, function: { name: 'other', parameters: { type: 'object', properties: {} } } };

async function failureOf(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof APIError) return error;
    throw error;
  }
  throw new Error('the request succeeded');
}

function lastBody(fake: FakeProvider): any {
  const request = fake.chatRequests().at(-1);
  if (request === undefined) throw new Error('no chat request reached the provider');
  return request.body;
}

const user = (content: string) => [{ role: 'user' as const, content }];

describe('OpenAI parameters in each provider’s own terms', () => {
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let ollama: FakeProvider;
  let service: TestService;
  let client: OpenAI;
  /** The Anthropic key travels in X-Provider-Api-Key; the SDK's Bearer is the OpenAI key. */
  const asAnthropic = { headers: { 'X-Provider-Api-Key': anthropicKey } };

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: openAIKey });
    anthropic = await startFakeAnthropic({ apiKey: anthropicKey });
    ollama = await startFakeOllama({ models: ['llama3.2'] });
    service = await startTestService('sqlite', {
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_BASE_URL: anthropic.url,
      OLLAMA_BASE_URL: ollama.url,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      DEFAULT_TEMPERATURE: '0.4',
    });
    client = new OpenAI({ baseURL: `${service.url}/v1`, apiKey: openAIKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await Promise.all([openai.close(), anthropic.close(), ollama.close()]);
  });
  beforeEach(() => {
    openai.reset();
    anthropic.reset();
    ollama.reset();
  });

  describe('response_format json_schema with chat.completions.parse and zodResponseFormat', () => {
    const format = zodResponseFormat(Weather, 'weather');
    const answer = { kind: 'text' as const, chunks: ['{"city":"Paris",', '"celsius":21}'] };

    it('openai: sent as is', async () => {
      openai.enqueue(answer);
      const completion = await client.chat.completions.parse({ model: 'openai/gpt-4o-mini', messages: user('Weather?'), response_format: format });
      expect(completion.choices[0]?.message.parsed).toEqual(weatherAnswer);
      expect(lastBody(openai).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'weather', schema: format.json_schema.schema, strict: true } });
    });

    it('anthropic: output_config.format, and no DEFAULT_TEMPERATURE it did not ask for', async () => {
      anthropic.enqueue(answer);
      const completion = await client.chat.completions.parse(
        { model: 'anthropic/claude-sonnet-4-5', messages: user('Weather?'), response_format: format },
        asAnthropic,
      );
      expect(completion.choices[0]?.message.parsed).toEqual(weatherAnswer);
      const body = lastBody(anthropic);
      expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: format.json_schema.schema } });
      expect(body.tools).toBeUndefined();
      expect('temperature' in body).toBe(false);
    });

    it('anthropic, a model without output_config: a forced tool whose input is the answer', async () => {
      anthropic.enqueue({ kind: 'tools', calls: [{ id: 'toolu_1', name: 'weather', arguments: weatherAnswer }] });
      const completion = await client.chat.completions.parse(
        { model: 'anthropic/claude-3-5-haiku-20241022', messages: user('Weather?'), response_format: format, temperature: 0.2 },
        asAnthropic,
      );
      expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { parsed: weatherAnswer } });
      expect(completion.choices[0]?.message.tool_calls ?? []).toEqual([]);
      const body = lastBody(anthropic);
      expect(body.output_config).toBeUndefined();
      expect(body.tools).toEqual([{ name: 'weather', description: expect.any(String), input_schema: format.json_schema.schema }]);
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'weather' });
      // Asked for, so sent.
      expect(body.temperature).toBe(0.2);
    });

    it('ollama: format is the schema', async () => {
      ollama.enqueue(answer);
      const completion = await client.chat.completions.parse({ model: 'ollama/llama3.2', messages: user('Weather?'), response_format: format });
      expect(completion.choices[0]?.message.parsed).toEqual(weatherAnswer);
      expect(lastBody(ollama).format).toEqual(format.json_schema.schema);
    });
  });

  it('response_format json_object: as is / output_config.format {type: object} / format "json"', async () => {
    const json = { kind: 'text' as const, chunks: ['{"ok":true}'] };
    openai.enqueue(json);
    anthropic.enqueue(json);
    ollama.enqueue(json);
    const body = { messages: user('JSON please'), response_format: { type: 'json_object' as const } };
    await client.chat.completions.create({ ...body, model: 'openai/gpt-4o-mini' });
    await client.chat.completions.create({ ...body, model: 'anthropic/claude-sonnet-4-5' }, asAnthropic);
    await client.chat.completions.create({ ...body, model: 'ollama/llama3.2' });
    expect(lastBody(openai).response_format).toEqual({ type: 'json_object' });
    expect(lastBody(anthropic).output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object' } } });
    expect(lastBody(ollama).format).toBe('json');
  });

  describe('tool_choice and parallel_tool_calls', () => {
    const called = { kind: 'tools' as const, calls: [{ id: 'call_1', name: 'lookup', arguments: { city: 'Oslo' } }] };
    const named = { type: 'function' as const, function: { name: 'lookup' } };

    it('openai: named and required as is, parallel_tool_calls as is', async () => {
      openai.enqueue(called, called);
      const forced = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), tools: [lookupTool, otherTool], tool_choice: named });
      expect(forced.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'lookup' } });
      expect(lastBody(openai).tool_choice).toEqual(named);
      await client.chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: user('x'),
        tools: [lookupTool],
        tool_choice: 'required',
        parallel_tool_calls: false,
      });
      expect(lastBody(openai)).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
    });

    it('anthropic: {type: tool, name} / {type: any}, parallel_tool_calls false as disable_parallel_tool_use', async () => {
      anthropic.enqueue(called, called, called);
      const tools = [lookupTool, otherTool];
      const forced = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), tools, tool_choice: named }, asAnthropic);
      expect(forced.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ function: { name: 'lookup', arguments: '{"city":"Oslo"}' } }] } });
      expect(lastBody(anthropic).tool_choice).toEqual({ type: 'tool', name: 'lookup' });
      await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), tools, tool_choice: 'required' }, asAnthropic);
      expect(lastBody(anthropic).tool_choice).toEqual({ type: 'any' });
      await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), tools, parallel_tool_calls: false }, asAnthropic);
      expect(lastBody(anthropic).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    });

    it('tool_choice none: as is to openai and anthropic, the tools left out for ollama', async () => {
      await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), tools: [lookupTool], tool_choice: 'none' });
      expect(lastBody(openai)).toMatchObject({ tool_choice: 'none', tools: [expect.anything()] });
      await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), tools: [lookupTool], tool_choice: 'none' }, asAnthropic);
      expect(lastBody(anthropic).tool_choice).toEqual({ type: 'none' });
      await client.chat.completions.create({ model: 'ollama/llama3.2', messages: user('x'), tools: [lookupTool], tool_choice: 'none' });
      expect(lastBody(ollama).tools).toBeUndefined();
    });

    it('ollama: a forced tool or parallel_tool_calls false is a 400 naming it, and nothing reaches Ollama', async () => {
      for (const [choice, param] of [
        [{ tool_choice: named }, 'tool_choice'],
        [{ tool_choice: 'required' as const }, 'tool_choice'],
        [{ parallel_tool_calls: false }, 'parallel_tool_calls'],
      ] as const) {
        const refused = await failureOf(client.chat.completions.create({ model: 'ollama/llama3.2', messages: user('x'), tools: [lookupTool], ...choice }));
        expect(refused.status).toBe(400);
        expect(refused.error).toMatchObject({ type: 'invalid_request_error', param });
      }
      expect(ollama.chatRequests()).toHaveLength(0);
    });

    it('a named tool that was not given, or a forced choice with no tools, is refused for every provider', async () => {
      const unknown = await failureOf(
        client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), tools: [lookupTool], tool_choice: { type: 'function', function: { name: 'missing' } } }),
      );
      expect(unknown.error).toMatchObject({ param: 'tool_choice' });
      const none = await failureOf(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), tool_choice: 'required' }));
      expect(none.error).toMatchObject({ param: 'tool_choice' });
      expect(openai.chatRequests()).toHaveLength(0);
    });
  });

  it('stop, seed, top_p, penalties, max_tokens: as is to openai, in options to ollama', async () => {
    const params = { stop: ['END'], seed: 42, top_p: 0.9, presence_penalty: 0.5, frequency_penalty: 0.25, max_tokens: 30 };
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), ...params });
    expect(lastBody(openai)).toMatchObject({ ...params, temperature: 0.4 });
    await client.chat.completions.create({ model: 'ollama/llama3.2', messages: user('x'), ...params, stop: 'END' });
    expect(lastBody(ollama).options).toEqual({
      temperature: 0.4,
      num_predict: 30,
      stop: ['END'],
      seed: 42,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
    });
  });

  it('anthropic: stop as stop_sequences, top_p and max_tokens as is; seed and penalties are 400 naming them', async () => {
    await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), stop: ['END', 'STOP'], top_p: 0.8, max_completion_tokens: 77 }, asAnthropic);
    const body = lastBody(anthropic);
    expect(body).toMatchObject({ stop_sequences: ['END', 'STOP'], top_p: 0.8, max_tokens: 77 });
    expect(body.stop).toBeUndefined();
    expect('temperature' in body).toBe(false);
    anthropic.reset();
    for (const [params, param] of [
      [{ seed: 1 }, 'seed'],
      [{ presence_penalty: 0.5 }, 'presence_penalty'],
      [{ frequency_penalty: -1 }, 'frequency_penalty'],
    ] as const) {
      const refused = await failureOf(client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), ...params }, asAnthropic));
      expect(refused.status).toBe(400);
      expect(refused.error).toMatchObject({ param });
    }
    // A penalty of 0 is OpenAI's default: it changes nothing and is no reason to refuse.
    await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), presence_penalty: 0, frequency_penalty: 0 }, asAnthropic);
    expect(anthropic.chatRequests()).toHaveLength(1);
    expect(lastBody(anthropic).presence_penalty).toBeUndefined();
  });

  it('reasoning_effort: as is to openai, output_config.effort to anthropic, 400 for ollama', async () => {
    await client.chat.completions.create({ model: 'openai/o4-mini', messages: user('x'), reasoning_effort: 'high' });
    expect(lastBody(openai).reasoning_effort).toBe('high');
    await client.chat.completions.create({ model: 'anthropic/claude-opus-4-5', messages: user('x'), reasoning_effort: 'medium' }, asAnthropic);
    expect(lastBody(anthropic).output_config).toEqual({ effort: 'medium' });
    const refused = await failureOf(client.chat.completions.create({ model: 'ollama/llama3.2', messages: user('x'), reasoning_effort: 'low' }));
    expect(refused.error).toMatchObject({ param: 'reasoning_effort' });
    expect(ollama.chatRequests()).toHaveLength(0);
  });

  describe('logprobs', () => {
    it('openai: forwarded, and returned in the whole reply', async () => {
      openai.enqueue({ kind: 'text', chunks: ['Hi', ' there'] });
      const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), logprobs: true, top_logprobs: 2 });
      expect(lastBody(openai)).toMatchObject({ logprobs: true, top_logprobs: 2 });
      const content = completion.choices[0]?.logprobs?.content ?? [];
      expect(content.map((token) => token.token)).toEqual(['Hi', ' there']);
      expect(content[0]).toEqual({
        token: 'Hi',
        logprob: -0.25,
        bytes: [72, 105],
        top_logprobs: [
          { token: 'Hi', logprob: -0.25, bytes: [72, 105] },
          { token: 'Hi~1', logprob: -0.5, bytes: [...Buffer.from('Hi~1')] },
        ],
      });
      expect(completion.choices[0]?.logprobs?.refusal).toBeNull();
    });

    it('openai: returned on each streamed chunk; without logprobs the choice says null', async () => {
      openai.enqueue({ kind: 'text', chunks: ['A', 'B'] });
      const stream = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), logprobs: true, stream: true });
      const tokens: string[] = [];
      for await (const chunk of stream) for (const token of chunk.choices[0]?.logprobs?.content ?? []) tokens.push(token.token);
      expect(tokens).toEqual(['A', 'B']);
      const plain = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x') });
      expect(plain.choices[0]?.logprobs).toBeNull();
      expect(lastBody(openai).logprobs).toBeUndefined();
    });

    it('anthropic and ollama: 400 naming logprobs (or top_logprobs without logprobs, anywhere)', async () => {
      const fromAnthropic = await failureOf(client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: user('x'), logprobs: true }, asAnthropic));
      expect(fromAnthropic.error).toMatchObject({ param: 'logprobs' });
      const fromOllama = await failureOf(client.chat.completions.create({ model: 'ollama/llama3.2', messages: user('x'), logprobs: true, top_logprobs: 1 }));
      expect(fromOllama.error).toMatchObject({ param: 'logprobs' });
      const alone = await failureOf(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), top_logprobs: 3 }));
      expect(alone.error).toMatchObject({ param: 'top_logprobs' });
      expect([...anthropic.chatRequests(), ...ollama.chatRequests(), ...openai.chatRequests()]).toHaveLength(0);
    });
  });

  it('user (and its successors), store, metadata, service_tier and prediction are accepted and ignored; an unknown field is a 400 naming it', async () => {
    const ignored = {
      // Deprecated by OpenAI, still sent by clients.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      user: 'end-user-7',
      safety_identifier: 'hash-of-user',
      prompt_cache_key: 'team-a',
      store: true,
      metadata: { team: 'a' },
      service_tier: 'flex',
      prediction: { type: 'content', content: 'guess' },
    } satisfies Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming>;
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: user('x'), ...ignored });
    const body = lastBody(openai);
    for (const field of Object.keys(ignored)) expect(body[field], field).toBeUndefined();

    for (const field of ['logit_bias', 'modalities', 'functions', 'top_k']) {
      const refused = await service.request('POST', '/v1/chat/completions', {
        json: { model: 'openai/gpt-4o-mini', messages: user('x'), [field]: field === 'top_k' ? 5 : {} },
        headers: { authorization: `Bearer ${openAIKey}` },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: field });
    }
    expect(openai.chatRequests()).toHaveLength(1);
  });

  describe('the same options on the /api chat bodies', () => {
    it('reach ollama in its options and format', async () => {
      const reply = await service.request('POST', '/api/unified/message', {
        json: {
          message: 'x',
          provider: 'ollama',
          options: { stop: ['##'], seed: 7, top_p: 0.5, frequency_penalty: 1, response_format: { type: 'json_object' }, maxTokens: 12 },
        },
      });
      expect(reply.status).toBe(200);
      const body = lastBody(ollama);
      expect(body.options).toEqual({ temperature: 0.4, num_predict: 12, stop: ['##'], seed: 7, top_p: 0.5, frequency_penalty: 1 });
      expect(body.format).toBe('json');
    });

    it('anthropic: refused with the contract’s envelope naming options.seed; without temperature none is sent', async () => {
      const refused = await service.request('POST', '/api/unified/message', {
        json: { message: 'x', provider: 'anthropic', apiKey: anthropicKey, options: { seed: 3 } },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'options.seed' } });
      expect(anthropic.chatRequests()).toHaveLength(0);
      const sent = await service.request('POST', '/api/unified/message', {
        json: { message: 'x', provider: 'anthropic', apiKey: anthropicKey, model: 'claude-sonnet-4-5', options: { stop: ['##'], reasoning_effort: 'low' } },
      });
      expect(sent.status).toBe(200);
      const body = lastBody(anthropic);
      expect(body).toMatchObject({ stop_sequences: ['##'], output_config: { effort: 'low' } });
      expect('temperature' in body).toBe(false);
    });

    it('openai: logprobs come back in the JSON reply; an unknown option is a 400, never dropped', async () => {
      openai.enqueue({ kind: 'text', chunks: ['Yes'] });
      const reply = await service.request('POST', '/api/unified/message', {
        json: { message: 'x', provider: 'openai', apiKey: openAIKey, options: { logprobs: true } },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.logprobs).toEqual([{ token: 'Yes', logprob: -0.25, bytes: [...Buffer.from('Yes')], top_logprobs: [] }]);
      const unknown = await service.request('POST', '/api/unified/message', {
        json: { message: 'x', provider: 'openai', apiKey: openAIKey, options: { logit_bias: { 1: 2 } } },
      });
      expect(unknown.status).toBe(400);
      expect(openai.chatRequests()).toHaveLength(1);
    });
  });
});
