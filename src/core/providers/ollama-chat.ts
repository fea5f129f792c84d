import { randomUUID } from 'node:crypto';
import { answerSchema, type CallOptions } from './call-options.js';
import {
  toolResultText,
  type ChatCall,
  type ChatMessage,
  type DecoderSinks,
  type RawToolCall,
  type StepFinish,
  type StepResult,
  type StepUsage,
  type StreamDecoder,
  type WireProtocol,
} from './chat-protocol.js';
import { ProviderProtocolError, ProviderStreamError } from './provider-errors.js';
import { LineSplitter, parseStreamJson } from './stream-lines.js';

// Ollama's native chat API (`POST {OLLAMA_BASE_URL}/api/chat`), streamed as NDJSON (CONTRACT §1).
// Sampling settings go in `options` (top-level ones are ignored); tool calls carry no ids and
// their arguments travel as objects.

function asObject(value: unknown): object {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
}

function appendMessage(messages: unknown[], message: ChatMessage): void {
  switch (message.role) {
    case 'user':
      messages.push({ role: 'user', content: message.content });
      return;
    case 'assistant':
      messages.push({
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls.length === 0
          ? {}
          : { tool_calls: message.toolCalls.map((call) => ({ function: { name: call.name, arguments: asObject(call.input) } })) }),
      });
      return;
    case 'tool':
      for (const result of message.results) messages.push({ role: 'tool', tool_name: result.name, content: toolResultText(result.output) });
      return;
  }
}

function wireMessages(call: ChatCall): unknown[] {
  const messages: unknown[] = [];
  if (call.system !== '') messages.push({ role: 'system', content: call.system });
  for (const message of call.messages) appendMessage(messages, message);
  return messages;
}

/** The sampling settings Ollama reads from `options` (its Options type), named as it names them. */
function samplingOptions(call: ChatCall, options: CallOptions): Record<string, unknown> {
  return {
    ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
    ...(call.maxTokens === undefined ? {} : { num_predict: call.maxTokens }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.presencePenalty === undefined ? {} : { presence_penalty: options.presencePenalty }),
    ...(options.frequencyPenalty === undefined ? {} : { frequency_penalty: options.frequencyPenalty }),
  };
}

/** `format`: a JSON Schema the answer must follow, or "json" for any JSON. */
function formatOf(options: CallOptions): unknown {
  const format = options.responseFormat;
  if (format === undefined || format.type === 'text') return undefined;
  return format.type === 'json_object' ? 'json' : answerSchema(format);
}

export const ollamaChat: WireProtocol = {
  request(call) {
    const callOptions = call.options ?? {};
    const format = formatOf(callOptions);
    // Ollama has no tool_choice: "none" is the tools left out (forcing one is refused before the call).
    const tools = callOptions.toolChoice === 'none' ? [] : call.tools;
    const body = {
      model: call.model,
      messages: wireMessages(call),
      stream: true,
      options: samplingOptions(call, callOptions),
      ...(format === undefined ? {} : { format }),
      ...(tools.length === 0
        ? {}
        : { tools: tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) }),
    };
    return { path: '/api/chat', headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' }, json: body };
  },
  decoder(sinks) {
    return new OllamaStreamDecoder(sinks);
  },
};

interface Line {
  error?: unknown;
  /** `thinking`: a thinking model's reasoning, streamed before its answer. */
  message?: { content?: unknown; thinking?: unknown; tool_calls?: unknown };
  done?: unknown;
  done_reason?: unknown;
  prompt_eval_count?: unknown;
  eval_count?: unknown;
}

interface LineToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

const doneReasons: Record<string, StepFinish> = { stop: 'stop', length: 'length' };

const malformed = () => new ProviderProtocolError('The answer is not an Ollama NDJSON stream', 'malformed');

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

class OllamaStreamDecoder implements StreamDecoder {
  private readonly lines = new LineSplitter();
  private readonly toolCalls: RawToolCall[] = [];
  private finish: StepFinish | undefined;
  private done = false;
  private usage: StepUsage = { inputTokens: 0, outputTokens: 0 };

  constructor(private readonly sinks: DecoderSinks) {}

  push(text: string): void {
    this.lines.push(text, this.onLine);
  }

  end(): StepResult {
    const rest = this.lines.takeRest();
    if (rest !== '') this.onLine(rest);
    if (!this.done) throw new ProviderProtocolError('The answer ended before its done line', 'cut');
    return { toolCalls: this.toolCalls, finish: this.finish ?? 'stop', usage: this.usage };
  }

  private readonly onLine = (line: string): void => {
    if (this.done || line.trim() === '') return;
    const value = parseStreamJson(line, malformed) as Line | null;
    if (value === null || typeof value !== 'object') throw malformed();
    if (value.error !== undefined) throw new ProviderStreamError(500);
    const message = value.message;
    if (message) {
      if (typeof message.content === 'string' && message.content !== '') this.sinks.onText(message.content);
      // Generated output, counted against the cap (chat-protocol.ts OutputSink), not shown.
      if (typeof message.thinking === 'string' && message.thinking !== '') this.sinks.onOutput(message.thinking);
      if (Array.isArray(message.tool_calls)) for (const call of message.tool_calls as LineToolCall[]) this.addToolCall(call);
    }
    if (value.done === true) {
      this.done = true;
      this.finish = doneReasons[String(value.done_reason)] ?? 'other';
      this.usage = { inputTokens: count(value.prompt_eval_count), outputTokens: count(value.eval_count) };
    }
  };

  /**
   * Ollama sends a tool call whole, its arguments as a value: the call is counted as output by its
   * name and its arguments' JSON before anything else, whether or not it is kept (a call without
   * a name is dropped, but was generated all the same).
   */
  private addToolCall(call: LineToolCall): void {
    const name = call.function?.name;
    const args = call.function?.arguments;
    const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
    if (typeof name === 'string' && name !== '') this.sinks.onOutput(name);
    this.sinks.onOutput(argumentsText);
    if (typeof name !== 'string' || name === '') return;
    this.toolCalls.push({ id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${randomUUID()}`, name, argumentsText });
  }
}
