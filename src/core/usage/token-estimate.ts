import type { ChatCall } from '../providers/chat-protocol.js';
import { numberOf } from './usage-ledger.js';
import type { Query } from './usage-sql.js';

/** CONTRACT §13's fixed per-message overhead (role markers, separators) in tokens. */
export const MESSAGE_OVERHEAD_TOKENS = 8;
/** Typical English and code run about four bytes a token: the estimate when a provider gives no count. */
const BYTES_PER_TOKEN = 4;

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** JSON.stringify gives undefined for undefined (and functions), whatever its type says. */
function jsonBytes(value: unknown): number {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined ? 0 : bytes(text);
}

/** Every byte the prompt sends the model: system, messages, tool calls and results, tool specs. */
export function promptBytes(call: Pick<ChatCall, 'system' | 'messages' | 'tools'>): { bytes: number; messages: number } {
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
  return { bytes: total, messages: call.messages.length + 1 };
}

/** The prompt's worst case (CONTRACT §13): no tokenizer makes more tokens than the text has bytes. */
export function worstCaseInputTokens(call: Pick<ChatCall, 'system' | 'messages' | 'tools'>): number {
  const prompt = promptBytes(call);
  return prompt.bytes + prompt.messages * MESSAGE_OVERHEAD_TOKENS;
}

/** The usual count, for the ledger when the provider reports none. */
export function estimateTokensOfBytes(byteCount: number, messages = 0): number {
  return Math.ceil(byteCount / BYTES_PER_TOKEN) + messages * MESSAGE_OVERHEAD_TOKENS;
}

export function estimateTextTokens(text: string): number {
  return estimateTokensOfBytes(bytes(text));
}

/** What an interrupted answer stored, estimated in tokens (crash recovery). */
export async function estimateStoredAnswer(query: Query, answerId: string | null): Promise<number> {
  if (answerId === null) return 0;
  const [row] = await query(`SELECT LENGTH(content) AS length FROM "Message" WHERE id = ?`, [answerId]);
  return row ? Math.ceil(numberOf(row.length) / BYTES_PER_TOKEN) : 0;
}
