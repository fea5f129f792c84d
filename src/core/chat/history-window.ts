import type { HistoryMessage } from '../chat-store/chat-store.js';
import type { ChatMessage } from '../providers/chat-protocol.js';

/** How an answer's tool calls are stored on its assistant message (`toolCalls`). */
export interface StoredToolCall {
  id: string;
  name: string;
  params: unknown;
  result?: unknown;
}

function storedToolCalls(message: HistoryMessage): StoredToolCall[] {
  if (!Array.isArray(message.toolCalls)) return [];
  return message.toolCalls.filter(
    (call): call is StoredToolCall & Record<string, never> =>
      call !== null && typeof call === 'object' && typeof (call as { id?: unknown }).id === 'string' && typeof (call as { name?: unknown }).name === 'string',
  );
}

/**
 * Stored messages as the model's messages. An answer that used tools is stored as one assistant
 * message carrying its calls and their results, so the window can never split a call from its
 * result; it becomes call → result → text again here. A `tool` message with no call to answer
 * (only an import can make one) is left out for the same reason, and so are imported `system`
 * messages: providers accept a system prompt only at the start, and ours is there.
 */
export function toChatMessages(history: readonly HistoryMessage[], toolsOffered: boolean): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const message of history) {
    if (message.role === 'user') {
      messages.push({ role: 'user', content: message.content });
      continue;
    }
    if (message.role !== 'assistant') continue;
    const calls = storedToolCalls(message);
    if (calls.length > 0 && toolsOffered) {
      messages.push({ role: 'assistant', content: '', toolCalls: calls.map((call) => ({ id: call.id, name: call.name, input: call.params ?? {} })) });
      messages.push({
        role: 'tool',
        results: calls.map((call) => ({ id: call.id, name: call.name, output: call.result ?? { error: 'no result was recorded' } })),
      });
    } else if (calls.length > 0) {
      // Without tools on offer, some providers refuse tool blocks in the history: the calls are
      // told as text instead, so the model still knows what it did.
      const told = calls.map((call) => `[${call.name} ${JSON.stringify(call.params ?? {})} → ${JSON.stringify(call.result ?? null)}]`);
      messages.push({ role: 'assistant', content: [...told, message.content].filter(Boolean).join('\n'), toolCalls: [] });
      continue;
    }
    if (message.content !== '') messages.push({ role: 'assistant', content: message.content, toolCalls: [] });
  }
  return messages;
}
