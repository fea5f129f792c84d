import type { ConversationContext } from '../context/conversation-context.js';
import type { ErrorCode } from '../errors/app-error.js';
import type { TokenLogprob } from '../providers/call-options.js';

// The events of CONTRACT §6. The engine yields them; SSE, the non-streaming replies, WebSocket
// frames and tRPC subscriptions only translate them.

export const finishReasons = ['stop', 'length', 'tool-calls', 'error', 'aborted'] as const;
export type FinishReason = (typeof finishReasons)[number];

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface DoneMetadata {
  conversationId: string;
  messageId: string;
  provider: string;
  model: string;
  finishReason: FinishReason;
  usage: TokenUsage;
  durationMs: number;
  timeToFirstTokenMs: number | null;
}

export type ChatEvent =
  /** `logprobs` only when the caller asked for them and the provider gave them (CONTRACT §12). */
  | { type: 'text'; content: string; logprobs?: readonly TokenLogprob[] }
  | { type: 'tool_call'; id: string; name: string; params: unknown }
  | { type: 'tool_result'; id: string; name: string; result: unknown }
  | { type: 'error'; code: ErrorCode; message: string }
  | { type: 'context_update'; context: ConversationContext }
  | { type: 'done'; metadata: DoneMetadata };
