import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startFakeAnthropic, startFakeOllama, startFakeOpenAI, type FakeProvider } from '../fakes/index.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §12 with the clients people point at such a service: LangChain's ChatOpenAI and the
// Vercel AI SDK (both its OpenAI-compatible provider and its OpenAI provider) against /v1, over
// each provider; and the server's provider key used when the caller sends none (SDKs always send
// some Bearer token, here a dummy). The fakes record what reached each provider.

const serverOpenAIKey = 'sk-server-openai-9';
const anthropicKey = 'sk-ant-caller-3';
const dummy = 'sk-dummy-not-a-key';

const Weather = z.object({ city: z.string(), celsius: z.number() });
const weatherAnswer = { city: 'Paris', celsius: 21 };
const weatherJson = { kind: 'text' as const, chunks: ['{"city":"Paris",', '"celsius":21}'] };

function lastRequest(fake: FakeProvider) {
  const request = fake.chatRequests().at(-1);
  if (request === undefined) throw new Error('no chat request reached the provider');
  return request;
}

describe('client libraries against /v1', () => {
  let openai: FakeProvider;
  let anthropic: FakeProvider;
  let ollama: FakeProvider;
  let service: TestService;
  let baseURL: string;

  beforeAll(async () => {
    openai = await startFakeOpenAI({ apiKey: serverOpenAIKey });
    anthropic = await startFakeAnthropic({ apiKey: anthropicKey });
    ollama = await startFakeOllama({ models: ['llama3.2'] });
    // The server has a key for OpenAI only: Anthropic needs the caller's.
    service = await startTestService('sqlite', {
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: serverOpenAIKey,
      ANTHROPIC_BASE_URL: anthropic.url,
      OLLAMA_BASE_URL: ollama.url,
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
    });
    baseURL = `${service.url}/v1`;
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

  describe('the server’s provider key (auth off)', () => {
    it('is used when the SDK sends only its dummy apiKey', async () => {
      const client = new OpenAI({ baseURL, apiKey: dummy, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
      expect(completion.choices[0]?.message.content).toBe('Hello from fake');
      expect(lastRequest(openai).headers.authorization).toBe(`Bearer ${serverOpenAIKey}`);
    });

    it('loses to the caller’s own X-Provider-Api-Key', async () => {
      const client = new OpenAI({ baseURL, apiKey: dummy, maxRetries: 0, defaultHeaders: { 'X-Provider-Api-Key': 'sk-callers-own' } });
      // The fake accepts only the server's key: the caller's reaching it is a 401 passed on.
      await expect(client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })).rejects.toThrow();
      expect(lastRequest(openai).headers.authorization).toBe('Bearer sk-callers-own');
    });

    it('where the server has none, the Bearer token is the provider key', async () => {
      const client = new OpenAI({ baseURL, apiKey: anthropicKey, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] });
      expect(completion.choices[0]?.message.content).toBe('Hello from fake');
      expect(lastRequest(anthropic).headers['x-api-key']).toBe(anthropicKey);
    });
  });

  describe('LangChain ChatOpenAI', () => {
    const chat = (model: string, headers: Record<string, string> = {}) =>
      new ChatOpenAI({ model, apiKey: dummy, configuration: { baseURL, defaultHeaders: headers } });

    it('withStructuredOutput, method jsonSchema (OpenAI) and jsonMode (Ollama)', async () => {
      openai.enqueue(weatherJson);
      const fromSchema = await chat('openai/gpt-4o-mini').withStructuredOutput(Weather, { name: 'weather', method: 'jsonSchema' }).invoke('Weather?');
      expect(fromSchema).toEqual(weatherAnswer);
      expect(lastRequest(openai).body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'weather' } });

      ollama.enqueue(weatherJson);
      const fromJsonMode = await chat('ollama/llama3.2').withStructuredOutput(Weather, { name: 'weather', method: 'jsonMode' }).invoke('Weather as JSON?');
      expect(fromJsonMode).toEqual(weatherAnswer);
      expect(lastRequest(ollama).body.format).toBe('json');
    });

    it('withStructuredOutput, method functionCalling (Anthropic): the forced tool’s arguments, not undefined', async () => {
      anthropic.enqueue({ kind: 'tools', calls: [{ id: 'toolu_1', name: 'weather', arguments: weatherAnswer }] });
      const model = chat('anthropic/claude-sonnet-4-5', { 'X-Provider-Api-Key': anthropicKey });
      const result = await model.withStructuredOutput(Weather, { name: 'weather', method: 'functionCalling' }).invoke('Weather?');
      expect(result).toEqual(weatherAnswer);
      expect(lastRequest(anthropic).body.tool_choice).toEqual({ type: 'tool', name: 'weather' });
    });

    it('bindTools with tool_choice', async () => {
      const lookup = langchainTool(() => 'unused', { name: 'lookup', description: 'Looks a city up', schema: z.object({ city: z.string() }) });
      openai.enqueue({ kind: 'tools', calls: [{ id: 'call_9', name: 'lookup', arguments: { city: 'Oslo' } }] });
      const message = await chat('openai/gpt-4o-mini').bindTools([lookup], { tool_choice: 'lookup' }).invoke('Find Oslo');
      expect(message.tool_calls).toEqual([expect.objectContaining({ name: 'lookup', args: { city: 'Oslo' }, id: 'call_9' })]);
      expect(lastRequest(openai).body.tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    });

    it('does not retry a 400 into several stored conversations', async () => {
      const before = (await service.request('GET', '/api/conversations')).body.conversations.length;
      let sent = 0;
      const counting: typeof fetch = (input, init) => {
        sent++;
        return fetch(input, init);
      };
      // LangChain's default retries: a refused parameter must fail at once, not be sent again and again.
      const model = new ChatOpenAI({ model: 'ollama/llama3.2', apiKey: dummy, configuration: { baseURL, fetch: counting } });
      const lookup = langchainTool(() => 'unused', { name: 'lookup', description: 'Looks a city up', schema: z.object({ city: z.string() }) });
      const started = Date.now();
      await expect(model.bindTools([lookup], { tool_choice: 'required' }).invoke('Find Oslo')).rejects.toThrow(/tool_choice/);
      expect(sent).toBe(1);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(ollama.chatRequests()).toHaveLength(0);
      const after = (await service.request('GET', '/api/conversations')).body.conversations.length;
      expect(after).toBe(before);
    });
  });

  describe('Vercel AI SDK', () => {
    const compatible = (model: string) => createOpenAICompatible({ name: 'service', baseURL, apiKey: dummy, supportsStructuredOutputs: true })(model);
    const openAIProvider = () => createOpenAI({ baseURL, apiKey: dummy, headers: { 'X-Provider-Api-Key': anthropicKey } });

    it('generateObject through @ai-sdk/openai-compatible (OpenAI) and @ai-sdk/openai (Anthropic)', async () => {
      openai.enqueue(weatherJson);
      // generateObject is deprecated in AI SDK 6, but it is what existing code calls.
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      const viaCompatible = await generateObject({ model: compatible('openai/gpt-4o-mini'), schema: Weather, schemaName: 'weather', prompt: 'Weather?' });
      expect(viaCompatible.object).toEqual(weatherAnswer);
      expect(lastRequest(openai).body.response_format).toMatchObject({ type: 'json_schema' });

      anthropic.enqueue(weatherJson);
      // eslint-disable-next-line @typescript-eslint/no-deprecated
      const viaOpenAI = await generateObject({ model: openAIProvider().chat('anthropic/claude-sonnet-4-5'), schema: Weather, prompt: 'Weather?' });
      expect(viaOpenAI.object).toEqual(weatherAnswer);
      expect(lastRequest(anthropic).body.output_config.format).toMatchObject({ type: 'json_schema', schema: { type: 'object' } });
    });

    it('toolChoice {type: "tool"}: the named tool is forced and its call handed back, not run', async () => {
      anthropic.enqueue({ kind: 'tools', calls: [{ id: 'toolu_7', name: 'lookup', arguments: { city: 'Rome' } }] });
      const result = await generateText({
        model: openAIProvider().chat('anthropic/claude-sonnet-4-5'),
        tools: { lookup: tool({ description: 'Looks a city up', inputSchema: z.object({ city: z.string() }) }), other: tool({ inputSchema: z.object({}) }) },
        toolChoice: { type: 'tool', toolName: 'lookup' },
        prompt: 'Find Rome',
      });
      expect(result.toolCalls).toEqual([expect.objectContaining({ toolName: 'lookup', input: { city: 'Rome' } })]);
      expect(lastRequest(anthropic).body.tool_choice).toEqual({ type: 'tool', name: 'lookup' });
    });

    it('multi-step tools: the SDK runs its own tool, the service passes the result through', async () => {
      openai.enqueue({ kind: 'tools', calls: [{ id: 'call_s1', name: 'lookup', arguments: { city: 'Oslo' } }] }, { kind: 'text', chunks: ['Oslo is ', 'cold'] });
      const ran: string[] = [];
      const result = await generateText({
        model: compatible('openai/gpt-4o-mini'),
        tools: {
          lookup: tool({
            inputSchema: z.object({ city: z.string() }),
            execute: ({ city }) => {
              ran.push(city);
              return Promise.resolve(`${city}: -3C`);
            },
          }),
        },
        stopWhen: stepCountIs(3),
        prompt: 'Weather in Oslo?',
      });
      expect(result.text).toBe('Oslo is cold');
      expect(ran).toEqual(['Oslo']);
      const [first, second] = openai.chatRequests();
      expect(first?.body.tools.map((offered: any) => offered.function.name)).toEqual(['lookup']);
      expect(second?.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_s1', content: expect.stringContaining('-3C') });
    });
  });
});
