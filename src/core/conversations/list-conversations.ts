import type { Store } from '../db/store.js';
import { decodeListCursor, encodeListCursor } from './conversation-list-cursor.js';
import { toSummary, type ConversationSummary } from './conversation-views.js';

export interface ListConversationsQuery {
  limit: number;
  offset: number;
  /** A cursor from a previous page's `nextBefore`: the page starts after that conversation. */
  before?: string | undefined;
  q?: string | undefined;
}

export interface ConversationPage {
  conversations: ConversationSummary[];
  total: number;
  /** The cursor for the next page; absent when this page is the last (so a reply without one is as before). */
  nextBefore?: string;
}

/**
 * The caller's conversations, newest first; empty untitled ones are not listed (CONTRACT §7).
 * `q` matches the title or any message, ignoring case (Unicode case folding, the same on both
 * databases); `total` counts every match, wherever the page is. `before` pages by position
 * instead of by `offset`, so deep pages cost no more than the first.
 */
export async function listConversations(store: Store, userId: string, query: ListConversationsQuery): Promise<ConversationPage> {
  const before = query.before === undefined ? undefined : decodeListCursor(query.before);
  const { rows, total, more } = await store.reads.list({ ownerId: userId, limit: query.limit, offset: query.offset, before, text: query.q });
  const last = rows.at(-1);
  const page: ConversationPage = { conversations: rows.map(toSummary), total };
  if (more && last) page.nextBefore = encodeListCursor({ lastModified: last.lastModified, id: last.id });
  return page;
}
