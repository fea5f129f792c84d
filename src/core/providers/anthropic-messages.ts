import { anthropicAnswerTool } from './anthropic-answer-tool.js';
import { answerSchema, type CallOptions, type ReasoningEffort } from './call-options.js';
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

// Anthropic's Messages API (`POST {ANTHROPIC_BASE_URL}/messages`), streamed (CONTRACT §1): the
// system prompt is its top-level `system`, tool calls are `tool_use` blocks and their results
// `tool_result` blocks of the next user turn.

const API_VERSION = '2023-06-01';

/**
 * `max_tokens` is required. Unless the caller sets it, the largest every model of a generation
 * accepts: Claude 3 stops at 4,096, 3.5 at 8,192; later models take at least 32,000, and 16,384
 * leaves room for the prompt in their context window.
 */
export function defaultAnthropicMaxTokens(model: string): number {
  if (/claude-3-(opus|sonnet|haiku)/.test(model)) return 4096;
  if (/claude-3-5/.test(model)) return 8192;
  return 16_384;
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string };

function blocksOf(message: ChatMessage): Block[] {
  switch (message.role) {
    case 'user':
      return message.content === '' ? [] : [{ type: 'text', text: message.content }];
    case 'assistant':
      return [
        ...(message.content === '' ? [] : [{ type: 'text' as const, text: message.content }]),
        ...message.toolCalls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.input ?? {} })),
      ];
    case 'tool':
      return message.results.map((result) => ({ type: 'tool_result' as const, tool_use_id: result.id, content: toolResultText(result.output) }));
  }
}

/**
 * The API wants turns that alternate and no empty content: tool results are user turns, and
 * consecutive turns of one role are merged into one. It also wants the first turn to be the
 * user's, so a history window that opens with an answer (or with the tool calls of one) starts at
 * the first question in it instead.
 */
function wireMessages(all: readonly ChatMessage[]): { role: 'user' | 'assistant'; content: Block[] }[] {
  const firstQuestion = all.findIndex((message) => message.role === 'user');
  const messages = firstQuestion === -1 ? [] : all.slice(firstQuestion);
  const turns: { role: 'user' | 'assistant'; content: Block[] }[] = [];
  for (const message of messages) {
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  return turns;
}

/**
 * OpenAI's reasoning efforts in Anthropic's words: the same names, and `minimal` as its least,
 * `low`. `none` is refused before the call (chat-options.ts).
 */
function effortOf(effort: ReasoningEffort): string {
  return effort === 'minimal' ? 'low' : effort;
}

/**
 * `tool_choice` (CONTRACT §12): `required` is `any`, a named function `tool`, and
 * `parallel_tool_calls: false` is `disable_parallel_tool_use` on whichever choice is sent. With a
 * forced answer tool the model must call a tool: that one, or, when the caller's tools are
 * offered too, any of them.
 */
function toolChoice(options: CallOptions, answerTool: string | undefined, callerTools: number): Record<string, unknown> | undefined {
  const choice = options.toolChoice;
  const single = options.parallelToolCalls === false ? { disable_parallel_tool_use: true } : {};
  if (answerTool !== undefined) return callerTools > 0 && choice !== 'none' ? { type: 'any', ...single } : { type: 'tool', name: answerTool };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...single };
  if (typeof choice === 'object') return { type: 'tool', name: choice.name, ...single };
  if (choice === 'auto' || options.parallelToolCalls === false) return { type: 'auto', ...single };
  return undefined;
}

function requestBody(call: ChatCall): Record<string, unknown> {
  const options = call.options ?? {};
  const answerTool = anthropicAnswerTool(call);
  // With a forced answer tool and tool_choice "none", the caller's tools are not offered at all.
  const callerTools = answerTool !== undefined && options.toolChoice === 'none' ? [] : call.tools;
  const tools = [
    ...callerTools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })),
    ...(answerTool === undefined ? [] : [answerTool]),
  ];
  const choice = tools.length === 0 ? undefined : toolChoice(options, answerTool?.name, callerTools.length);
  const format = options.responseFormat;
  const outputConfig = {
    ...(format === undefined || format.type === 'text' || answerTool !== undefined ? {} : { format: { type: 'json_schema', schema: answerSchema(format) } }),
    ...(options.reasoningEffort === undefined ? {} : { effort: effortOf(options.reasoningEffort) }),
  };
  return {
    model: call.model,
    max_tokens: call.maxTokens ?? defaultAnthropicMaxTokens(call.model),
    ...(call.system === '' ? {} : { system: call.system }),
    messages: wireMessages(call.messages),
    ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
    ...(options.topP === undefined ? {} : { top_p: options.topP }),
    ...(options.stop === undefined || options.stop.length === 0 ? {} : { stop_sequences: options.stop }),
    ...(Object.keys(outputConfig).length === 0 ? {} : { output_config: outputConfig }),
    stream: true,
    ...(tools.length === 0 ? {} : { tools }),
    ...(choice === undefined ? {} : { tool_choice: choice }),
  };
}

export const anthropicMessages: WireProtocol = {
  request(call, apiKey) {
    const body = requestBody(call);
    return {
      path: '/messages',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'anthropic-version': API_VERSION,
        ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
      },
      json: body,
    };
  },
  decoder(sinks, call) {
    return new AnthropicStreamDecoder(sinks, call === undefined ? undefined : anthropicAnswerTool(call)?.name);
  },
};

interface StreamEvent {
  type?: unknown;
  index?: unknown;
  message?: { usage?: Record<string, unknown> };
  /** `text`, `thinking` and `data` (redacted thinking) are empty at a block's start in practice. */
  content_block?: { type?: unknown; id?: unknown; name?: unknown; text?: unknown; thinking?: unknown; data?: unknown };
  delta?: Delta;
  usage?: Record<string, unknown>;
  error?: { type?: unknown };
}

/** A content block's delta: `text_delta`, `input_json_delta`, `thinking_delta`, `signature_delta` and others. */
interface Delta {
  type?: unknown;
  text?: unknown;
  partial_json?: unknown;
  thinking?: unknown;
  signature?: unknown;
  stop_reason?: unknown;
}

const stopReasons: Record<string, StepFinish> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool-calls' };

/** An `error` event's type as the HTTP status the same failure has before a stream (Anthropic's error types). */
const errorStatuses: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const malformed = () => new ProviderProtocolError('The answer is not a Messages stream', 'malformed');

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** Reports a field's text as output when it is some: what is not a string carries none. */
function report(onOutput: OutputSink, value: unknown): void {
  if (typeof value === 'string' && value !== '') onOutput(value);
}

class AnthropicStreamDecoder implements StreamDecoder {
  private readonly sse = new SseReader((_event, data) => {
    this.onData(data);
  });
  /** Tool-use blocks by their index in the message. */
  private readonly toolBlocks = new Map<number, { id: string; name: string; json: string }>();
  /** The index of the forced answer tool's block: its input is the answer's text. */
  private answerBlock: number | undefined;
  private finish: StepFinish | undefined;
  private stopped = false;
  private readonly usage: StepUsage = { inputTokens: 0, outputTokens: 0 };

  constructor(
    private readonly sinks: DecoderSinks,
    private readonly answerTool: string | undefined,
  ) {}

  push(text: string): void {
    this.sse.push(text);
  }

  end(): StepResult {
    this.sse.end();
    if (!this.stopped) throw new ProviderProtocolError('The answer ended before message_stop', 'cut');
    const toolCalls: RawToolCall[] = [...this.toolBlocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, block]) => ({ id: block.id, name: block.name, argumentsText: block.json === '' ? '{}' : block.json }));
    // The model calling only the answer tool has answered, not called a tool.
    const finish = this.finish === 'tool-calls' && toolCalls.length === 0 && this.answerBlock !== undefined ? 'stop' : this.finish;
    return { toolCalls, finish: finish ?? 'stop', usage: this.usage };
  }

  private onData(data: string): void {
    const event = parseStreamJson(data, malformed) as StreamEvent | null;
    if (event === null || typeof event !== 'object') throw malformed();
    switch (event.type) {
      case 'message_start': {
        // Cached prompt tokens are counted apart from `input_tokens`; all of them were sent.
        const usage = event.message?.usage ?? {};
        this.usage.inputTokens = count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
        this.usage.outputTokens = count(usage.output_tokens);
        return;
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block) this.reportBlockStart(block);
        if (block?.type === 'tool_use' && typeof event.index === 'number' && this.answerTool !== undefined && block.name === this.answerTool) {
          this.answerBlock = event.index;
        } else if (block?.type === 'tool_use' && typeof event.index === 'number') {
          this.toolBlocks.set(event.index, { id: typeof block.id === 'string' ? block.id : '', name: typeof block.name === 'string' ? block.name : '', json: '' });
        }
        return;
      }
      case 'content_block_delta':
        if (event.delta) this.onDelta(event.index, event.delta);
        return;
      case 'message_delta':
        if (typeof event.delta?.stop_reason === 'string') this.finish = stopReasons[event.delta.stop_reason] ?? 'other';
        // `output_tokens` here is the running total of the message.
        if (event.usage && typeof event.usage.output_tokens === 'number') this.usage.outputTokens = event.usage.output_tokens;
        return;
      case 'message_stop':
        this.stopped = true;
        return;
      case 'error':
        throw new ProviderStreamError(errorStatuses[String(event.error?.type)] ?? 500);
      default:
        // ping, content_block_stop, and event types added after this was written.
        return;
    }
  }

  /**
   * Every delta is output the model generated, whatever its type, and counts as such (the cap,
   * chat-protocol.ts OutputSink): text and the answer tool's input are the answer's text, a tool
   * call's input fragments are kept for the call, thinking and its signature (and delta types
   * added after this was written) are counted only.
   */
  private onDelta(index: unknown, delta: Delta): void {
    const { onText, onOutput } = this.sinks;
    switch (delta.type) {
      case 'text_delta':
        if (typeof delta.text === 'string' && delta.text !== '') onText(delta.text);
        return;
      case 'input_json_delta': {
        if (typeof delta.partial_json !== 'string' || delta.partial_json === '') return;
        if (index === this.answerBlock) {
          onText(delta.partial_json);
          return;
        }
        onOutput(delta.partial_json);
        const block = typeof index === 'number' ? this.toolBlocks.get(index) : undefined;
        if (block) block.json += delta.partial_json;
        return;
      }
      case 'thinking_delta':
        report(onOutput, delta.thinking);
        return;
      case 'signature_delta':
        report(onOutput, delta.signature);
        return;
      default:
        // Counted by its size on the wire: what a delta of an unknown kind holds is not known.
        onOutput(JSON.stringify(delta));
    }
  }

  /** What a block's start carries that the model generated: a tool's name, any opening text. */
  private reportBlockStart(block: NonNullable<StreamEvent['content_block']>): void {
    const { onOutput } = this.sinks;
    report(onOutput, block.name);
    report(onOutput, block.text);
    report(onOutput, block.thinking);
    report(onOutput, block.data);
  }
}
