import type { ConversationHead } from '../chat-store/chat-store.js';
import type { StoredToolCall } from '../chat/history-window.js';
import type { Store } from '../db/store.js';
import { insertConversationWithMessages } from './insert-conversation.js';

/** One message of a conversation a caller sent whole, as it is stored. */
export interface TranscriptRow {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** An assistant's calls, with the results the caller sent for them (as the engine stores its own). */
  toolCalls?: StoredToolCall[];
}

/**
 * Stores a conversation a caller sent whole (the OpenAI-compatible path is stateless: each
 * request carries every message) as a new conversation of `userId`, in one transaction, before
 * the model is called; the answer is appended to it like any other. It does not become the
 * caller's current conversation: an API client calling now and then must not take the web
 * interface's conversation away from its user.
 */
export function recordTranscript(store: Store, userId: string, rows: readonly TranscriptRow[]): Promise<ConversationHead> {
  return insertConversationWithMessages(store, { ownerId: userId, metadata: { source: 'openai-compatible' }, messages: rows });
}
