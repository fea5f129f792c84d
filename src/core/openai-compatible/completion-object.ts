import type { DoneMetadata, FinishReason } from '../chat/chat-events.js';
import type { ToolActivity } from '../chat/collect-reply.js';
import type { TokenLogprob } from '../providers/call-options.js';

// The OpenAI wire objects of a completion (CONTRACT §10), built from the engine's results. One
// module for both replies, so the streamed chunks and the whole object always agree.

export type OpenAIFinishReason = 'stop' | 'length' | 'tool_calls';

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface OpenAIToolCallOut {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: OpenAIToolCallOut[] };
    logprobs: OpenAILogprobs | null;
    finish_reason: OpenAIFinishReason;
  }[];
  usage: OpenAIUsage;
}

/** A choice's `logprobs`, as OpenAI sends them (the service never produces refusals). */
export interface OpenAILogprobs {
  content: TokenLogprob[] | null;
  refusal: null;
}

export function openAILogprobs(content: readonly TokenLogprob[]): OpenAILogprobs {
  return { content: [...content], refusal: null };
}

/** What names one completion on the wire: the same in every chunk of a stream. */
export interface CompletionIdentity {
  /** `chatcmpl-<streamId>`. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** `<provider>/<model>`, as /v1/models lists it. */
  model: string;
}

export function completionIdentity(streamId: string, provider: string, model: string, now = Date.now()): CompletionIdentity {
  return { id: `chatcmpl-${streamId}`, created: Math.floor(now / 1000), model: `${provider}/${model}` };
}

/**
 * The engine's finish reasons in OpenAI's words. `tool-calls` is the model calling the caller's
 * tools (or, on the service's own tools, MAX_TOOL_STEPS running out); an aborted answer ended
 * early but whole as far as it went, which OpenAI calls `stop`. `error` never gets here: it is
 * OpenAI's error object instead.
 */
export function openAIFinishReason(reason: FinishReason): OpenAIFinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool_calls';
    case 'stop':
    case 'aborted':
    case 'error':
      return 'stop';
  }
}

export function openAIUsage(usage: DoneMetadata['usage']): OpenAIUsage {
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

/** A call's arguments as the JSON text OpenAI sends (kept as sent when the model's were not JSON). */
export function argumentsText(params: unknown): string {
  return typeof params === 'string' ? params : JSON.stringify(params ?? {});
}

export function openAIToolCall(call: Pick<ToolActivity, 'id' | 'name' | 'params'>): OpenAIToolCallOut {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText(call.params) } };
}

/**
 * The whole `chat.completion` object of a non-streaming reply. `logprobsAsked`: the request had
 * `logprobs: true`, so the choice carries them (an empty list when the answer was only tool calls).
 */
export function chatCompletion(
  identity: CompletionIdentity,
  reply: { response: string; toolCalls: readonly ToolActivity[]; metadata: DoneMetadata; logprobs: readonly TokenLogprob[] },
  logprobsAsked = false,
): ChatCompletion {
  const toolCalls = reply.toolCalls.map(openAIToolCall);
  // OpenAI sends null content for an answer that is only tool calls.
  const content = reply.response === '' && toolCalls.length > 0 ? null : reply.response;
  return {
    ...identity,
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: logprobsAsked ? openAILogprobs(reply.logprobs) : null,
        finish_reason: openAIFinishReason(reply.metadata.finishReason),
      },
    ],
    usage: openAIUsage(reply.metadata.usage),
  };
}
