import { randomUUID } from 'node:crypto';
import { readLogprobs, type CallOptions, type ResponseFormat } from './call-options.js';
import {
  toolResultText,
  type ChatCall,
  type ChatMessage,
  type DecoderSinks,
  type OutputSink,
  type RawToolCall,
  type StepFinish,
  type StepResult,
  type StepUsage,
  type StreamDecoder,
  type WireProtocol,
} from './chat-protocol.js';
import { ProviderProtocolError, ProviderStreamError } from './provider-errors.js';
import { parseStreamJson, SseReader } from './stream-lines.js';

// OpenAI's Chat Completions API (`POST {OPENAI_BASE_URL}/chat/completions`), streamed: what OpenAI
// speaks and what vLLM, LM Studio, OpenRouter and llama.cpp's server also speak (CONTRACT §1).

/** o-series and GPT-5 reasoning models refuse `temperature` and count `max_completion_tokens`. */
export function isOpenAIReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5(?!-chat))/.test(model);
}

function wireMessages(call: ChatCall): unknown[] {
  const messages: unknown[] = [];
  if (call.system !== '') messages.push({ role: 'system', content: call.system });
  for (const message of call.messages) appendMessage(messages, message);
  return messages;
}

function appendMessage(messages: unknown[], message: ChatMessage): void {
  switch (message.role) {
    case 'user':
      messages.push({ role: 'user', content: message.content });
      return;
    case 'assistant':
      if (message.toolCalls.length === 0) {
        messages.push({ role: 'assistant', content: message.content });
        return;
      }
      messages.push({
        role: 'assistant',
        content: message.content === '' ? null : message.content,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
        })),
      });
      return;
    case 'tool':
      for (const result of message.results) {
        messages.push({ role: 'tool', tool_call_id: result.id, content: toolResultText(result.output) });
      }
      return;
  }
}

function responseFormat(format: ResponseFormat): unknown {
  if (format.type !== 'json_schema') return { type: format.type };
  const { name, description, schema, strict } = format;
  return { type: 'json_schema', json_schema: { name, ...(description === undefined ? {} : { description }), ...(schema === undefined ? {} : { schema }), ...(strict == null ? {} : { strict }) } };
}

/** OpenAI's own parameters, as the caller gave them (CONTRACT §12: "as is"). */
function parameters(options: CallOptions, hasTools: boolean): Record<string, unknown> {
  const choice = options.toolChoice;
  return {
    ...(options.responseFormat === undefined ? {} : { response_format: responseFormat(options.responseFormat) }),
    // Without tools OpenAI refuses both; the caller's tool_choice without tools was refused earlier.
    ...(hasTools && choice !== undefined ? { tool_choice: typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } } } : {}),
    ...(hasTools && options.parallelToolCalls !== undefined ? { parallel_tool_calls: options.parallelToolCalls } : {}),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.presencePenalty === undefined ? {} : { presence_penalty: options.presencePenalty }),
    ...(options.frequencyPenalty === undefined ? {} : { frequency_penalty: options.frequencyPenalty }),
    ...(options.reasoningEffort === undefined ? {} : { reasoning_effort: options.reasoningEffort }),
    ...(options.logprobs === undefined ? {} : { logprobs: options.logprobs }),
    ...(options.topLogprobs === undefined ? {} : { top_logprobs: options.topLogprobs }),
  };
}

export const openAIChat: WireProtocol = {
  request(call, apiKey) {
    const reasoning = isOpenAIReasoningModel(call.model);
    const body = {
      model: call.model,
      messages: wireMessages(call),
      stream: true,
      stream_options: { include_usage: true },
      ...(reasoning || call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(call.maxTokens === undefined ? {} : reasoning ? { max_completion_tokens: call.maxTokens } : { max_tokens: call.maxTokens }),
      ...(call.tools.length === 0
        ? {}
        : { tools: call.tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) }),
      ...parameters(call.options ?? {}, call.tools.length > 0),
    };
    return {
      path: '/chat/completions',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }) },
      json: body,
    };
  },
  decoder(sinks) {
    return new OpenAIStreamDecoder(sinks);
  },
};

interface ChunkToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

/**
 * A chunk's delta. Besides `content` and `tool_calls`, what servers speaking this API stream as
 * output: `refusal` (OpenAI), the reasoning of a reasoning model (`reasoning_content`: DeepSeek,
 * vLLM, llama.cpp; `reasoning`: OpenRouter, Ollama's /v1, newer vLLM), and the legacy
 * `function_call`. Only counted (chat-protocol.ts OutputSink), never shown.
 */
interface Delta {
  content?: unknown;
  tool_calls?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  function_call?: { name?: unknown; arguments?: unknown };
}

interface Chunk {
  error?: { type?: unknown; code?: unknown };
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  choices?: { delta?: Delta; logprobs?: { content?: unknown } | null; finish_reason?: unknown }[];
}

const finishReasons: Record<string, StepFinish> = { stop: 'stop', length: 'length', tool_calls: 'tool-calls', function_call: 'tool-calls' };

const malformed = () => new ProviderProtocolError('The answer is not a Chat Completions stream', 'malformed');

/** An error chunk's status as the same failure has before a stream: rate limits 429, the rest 500. */
function errorStatus(error: NonNullable<Chunk['error']>): number {
  return /rate_limit|requests|tokens/.test(`${String(error.type)} ${String(error.code)}`) ? 429 : 500;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Reports a field's text as output when it is some: what is not a string carries none. */
function report(onOutput: OutputSink, value: unknown): void {
  if (typeof value === 'string' && value !== '') onOutput(value);
}

class OpenAIStreamDecoder implements StreamDecoder {
  private readonly sse = new SseReader((_event, data) => {
    this.onData(data);
  });
  private readonly calls: { id: string; name: string; args: string }[] = [];
  private finish: StepFinish | undefined;
  private sawDone = false;
  private usage: StepUsage = { inputTokens: 0, outputTokens: 0 };

  constructor(private readonly sinks: DecoderSinks) {}

  push(text: string): void {
    this.sse.push(text);
  }

  end(): StepResult {
    this.sse.end();
    if (!this.sawDone && this.finish === undefined) throw new ProviderProtocolError('The answer ended before its end', 'cut');
    const toolCalls: RawToolCall[] = this.calls
      .filter((call) => call.name !== '')
      .map((call) => ({ id: call.id === '' ? `call_${randomUUID()}` : call.id, name: call.name, argumentsText: call.args }));
    return { toolCalls, finish: this.finish ?? 'stop', usage: this.usage };
  }

  private onData(data: string): void {
    if (data === '[DONE]') {
      this.sawDone = true;
      return;
    }
    const chunk = parseStreamJson(data, malformed) as Chunk | null;
    if (chunk === null || typeof chunk !== 'object') throw malformed();
    if (chunk.error) throw new ProviderStreamError(errorStatus(chunk.error));
    if (chunk.usage) this.usage = { inputTokens: count(chunk.usage.prompt_tokens), outputTokens: count(chunk.usage.completion_tokens) };
    const choice = chunk.choices?.[0];
    if (!choice) return;
    // Only one answer is asked for (no `n`); any other choice a server streams is output all the same.
    if (Array.isArray(chunk.choices) && chunk.choices.length > 1) for (const other of chunk.choices.slice(1)) this.reportIgnoredChoice(other);
    const delta = choice.delta;
    if (delta) {
      if (typeof delta.content === 'string' && delta.content !== '') {
        // Asked-for log probabilities ride on the chunk of the text they describe.
        const logprobs = choice.logprobs ? readLogprobs(choice.logprobs.content) : [];
        if (logprobs.length > 0) this.sinks.onText(delta.content, logprobs);
        else this.sinks.onText(delta.content);
      }
      if (Array.isArray(delta.tool_calls)) for (const part of delta.tool_calls as ChunkToolCall[]) this.addToolCallPart(part);
      this.reportOtherOutput(delta);
    }
    if (typeof choice.finish_reason === 'string') this.finish = finishReasons[choice.finish_reason] ?? 'other';
  }

  /** The delta's output that is neither text nor a tool call: counted, not kept. */
  private reportOtherOutput(delta: Delta): void {
    report(this.sinks.onOutput, delta.refusal);
    // A server that sends the reasoning under both names generated it once: it counts once.
    report(this.sinks.onOutput, typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '' ? delta.reasoning_content : delta.reasoning);
    if (delta.function_call) {
      report(this.sinks.onOutput, delta.function_call.name);
      report(this.sinks.onOutput, delta.function_call.arguments);
    }
  }

  /** A choice past the first: never read, but all of its output is counted. */
  private reportIgnoredChoice(choice: NonNullable<Chunk['choices']>[number] | null | undefined): void {
    const delta = choice?.delta;
    if (!delta) return;
    report(this.sinks.onOutput, delta.content);
    if (Array.isArray(delta.tool_calls)) {
      for (const part of delta.tool_calls as (ChunkToolCall | null)[]) {
        report(this.sinks.onOutput, part?.function?.name);
        report(this.sinks.onOutput, part?.function?.arguments);
      }
    }
    this.reportOtherOutput(delta);
  }

  /** Calls arrive as an opening part (id, name) and argument fragments, keyed by index. */
  private addToolCallPart(part: ChunkToolCall): void {
    // Counted as streamed, whatever becomes of it: a call without a name is dropped at the end,
    // but the provider generated (and bills) its arguments all the same.
    report(this.sinks.onOutput, part.function?.name);
    report(this.sinks.onOutput, part.function?.arguments);
    const index = typeof part.index === 'number' ? part.index : Math.max(0, this.calls.length - 1);
    let call = this.calls[index];
    if (call === undefined) {
      call = { id: '', name: '', args: '' };
      this.calls[index] = call;
    }
    if (typeof part.id === 'string' && part.id !== '') call.id = part.id;
    if (typeof part.function?.name === 'string') call.name += part.function.name;
    if (typeof part.function?.arguments === 'string') call.args += part.function.arguments;
  }
}
