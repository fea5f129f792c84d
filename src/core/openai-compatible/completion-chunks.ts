import type { ChatEvent } from '../chat/chat-events.js';
import { openAIErrorObject } from './openai-error-object.js';
import { openAIFinishReason, openAILogprobs, openAIToolCall, openAIUsage, type CompletionIdentity, type OpenAILogprobs } from './completion-object.js';

/**
 * Turns the engine's events into OpenAI's `chat.completion.chunk` stream, as SSE text: a first
 * chunk with the role, a chunk per text delta and per tool call, a last chunk with the finish
 * reason, with `stream_options.include_usage` one more with no choices and the usage (and
 * `usage: null` on every chunk before it, as OpenAI sends), then `data: [DONE]`. A failure inside
 * the stream is OpenAI's error object as a data line, which its SDKs raise; `[DONE]` still ends it.
 */
export class CompletionChunks {
  private toolIndex = 0;
  private failed = false;

  constructor(
    private readonly identity: CompletionIdentity,
    private readonly includeUsage: boolean,
  ) {}

  /** What goes out before the first event. */
  opening(): string {
    return this.chunk({ role: 'assistant', content: '', refusal: null });
  }

  /** The SSE text of one event ('' for the events OpenAI has no counterpart for). */
  translate(event: ChatEvent): string {
    switch (event.type) {
      case 'text':
        return this.chunk({ content: event.content }, null, event.logprobs ? openAILogprobs(event.logprobs) : null);
      case 'tool_call':
        return this.chunk({ tool_calls: [{ index: this.toolIndex++, ...openAIToolCall(event) }] });
      case 'error':
        this.failed = true;
        return data(openAIErrorObject({ code: event.code, message: event.message, details: {} }));
      case 'done': {
        if (this.failed) return 'data: [DONE]\n\n';
        let text = this.chunk({}, openAIFinishReason(event.metadata.finishReason));
        if (this.includeUsage) text += data({ ...this.envelope(), choices: [], usage: openAIUsage(event.metadata.usage) });
        return `${text}data: [DONE]\n\n`;
      }
      case 'tool_result':
      case 'context_update':
        return '';
    }
  }

  private envelope() {
    return { id: this.identity.id, object: 'chat.completion.chunk', created: this.identity.created, model: this.identity.model };
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null, logprobs: OpenAILogprobs | null = null): string {
    return data({
      ...this.envelope(),
      choices: [{ index: 0, delta, logprobs, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    });
  }
}

function data(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}
