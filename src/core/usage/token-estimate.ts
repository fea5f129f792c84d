import type { ChatCall } from '../providers/chat-protocol.js';
import { numberOf } from './usage-ledger.js';
import type { Query } from './usage-sql.js';

/** CONTRACT §13's fixed per-message overhead (role markers, separators) in tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 8;
function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** JSON.stringify gives undefined for undefined (and functions), whatever its type says. */
function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 0 : bytes(text);
}

/**
 * Every byte the prompt sends the model: system, messages, tool calls and results, tool specs,
 * and the call's options, since a provider bills a `response_format` schema or stop sequences as
 * prompt (a 221 KB schema with a 7-byte message once reserved 30 tokens and was billed 55,000).
 */
export function promptBytes(call: Pick<ChatCall, 'system' | 'messages' | 'tools' | 'options'>): { bytes: number; messages: number } {
  let total = bytes(call.system);
  for (const message of call.messages) {
    if (message.role === 'tool') {
      for (const result of message.results) total += bytes(result.name) + jsonBytes(result.output);
    } else {
      total += bytes(message.content);
      if (message.role === 'assistant') for (const toolCall of message.toolCalls) total += bytes(toolCall.name) + jsonBytes(toolCall.input);
    }
  }
  for (const tool of call.tools) total += bytes(tool.name) + bytes(tool.description) + bytes(JSON.stringify(tool.parameters));
  // Each option's value as sent (an option not given counts nothing).
  if (call.options !== undefined) for (const value of Object.values(call.options)) total += jsonBytes(value);
  return { bytes: total, messages: call.messages.length + 1 };
}

/** The prompt's worst case (CONTRACT §13): no tokenizer makes more tokens than the text has bytes. */
export function worstCaseInputTokens(call: Pick<ChatCall, 'system' | 'messages' | 'tools' | 'options'>): number {
  const prompt = promptBytes(call);
  return prompt.bytes + prompt.messages * MESSAGE_OVERHEAD_TOKENS;
}

// When a provider gives no count (an interrupted stream, a failed call, a crash), the call is
// charged its worst case, as its reservation was: one token per byte sent and received (no
// tokenizer makes more), the answer capped at the output limit the provider was sent. A typical
// count (about four bytes a token) would charge less than the call may have cost, and a caller
// who always cut their streams off before the provider's count would overshoot a token quota by
// more than one reservation, call after call (CONTRACT §13 allows one).

/** An answer's tokens when the provider counted none: its bytes, at most the output limit sent. */
export function worstCaseOutputTokens(text: string, outputLimit: number | undefined): number {
  const count = bytes(text);
  return outputLimit === undefined ? count : Math.min(count, outputLimit);
}

/** What an interrupted answer stored, in tokens, counted as worstCaseOutputTokens does (crash recovery). */
export async function estimateStoredAnswer(query: Query, answerId: string | null, outputLimit: number): Promise<number> {
  if (answerId === null) return 0;
  // octet_length counts UTF-8 bytes on both databases (SQLite reads it without the text).
  const [row] = await query(`SELECT octet_length(content) AS length FROM "Message" WHERE id = ?`, [answerId]);
  return row ? Math.min(numberOf(row.length), outputLimit) : 0;
}
