import type { Store } from '../db/store.js';
import { toSummary, type ConversationSummary } from './conversation-views.js';

export interface ListConversationsQuery {
  limit: number;
  offset: number;
  q?: string | undefined;
}

export interface ConversationPage {
  conversations: ConversationSummary[];
  total: number;
}

/**
 * The caller's conversations, newest first; empty untitled ones are not listed (CONTRACT §7).
 * `q` matches the title or any message, ignoring case.
 */
export async function listConversations(store: Store, userId: string, query: ListConversationsQuery): Promise<ConversationPage> {
  const { rows, total } = await store.reads.list({ ownerId: userId, limit: query.limit, offset: query.offset, text: query.q });
  return { conversations: rows.map(toSummary), total };
}
