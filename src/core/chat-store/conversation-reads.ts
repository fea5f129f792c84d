import type { Prisma } from '../../generated/sqlite/client.js';
import type { ListPosition } from '../conversations/conversation-list-cursor.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';

// The conversation list and a conversation's messages, the REST API's busiest reads, as prepared
// statements on the drivers (like the chat store beside it): through Prisma's query engine half of
// a list request's CPU time went to the engine itself (BENCHMARKS.md, "REST and storage"). One
// implementation per database; tests hold both to what Prisma reads.

export interface ListQuery {
  ownerId: string;
  limit: number;
  /** Rows skipped after `before` (or from the start). */
  offset: number;
  /** Only conversations after this place in the list's order (keyset paging). */
  before?: ListPosition | undefined;
  /**
   * A substring of the title or of any message, ignoring case as FTS5 folds it
   * (conversation-search-folding.ts); absent or blank lists all.
   */
  text?: string | undefined;
}

export interface ListedPage {
  rows: ConversationSummaryRow[];
  /** All the listed (or matching) conversations, wherever the page is. */
  total: number;
  /** Whether conversations follow the page's last one. */
  more: boolean;
}

export interface StoredConversation extends ConversationSummaryRow {
  ownerId: string;
  metadata: Prisma.JsonValue | null;
}

export interface ConversationReads {
  /** The owner's listed conversations (not the empty untitled ones), newest first, and how many there are. */
  list(query: ListQuery): Promise<ListedPage>;
  /** A conversation by id, whoever owns it; null when there is none. */
  find(id: string): Promise<StoredConversation | null>;
  /** A conversation's messages in order. */
  messages(conversationId: string): Promise<MessageViewRow[]>;
  /** Resolves once the database answers a trivial query: the health check's probe, without Prisma's engine. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The search text as every path takes it: trimmed, and lone surrogates as U+FFFD, which is what
 * either driver would send for them in UTF-8 (so both databases search for the same text).
 */
export function searchText(text: string | undefined): string | null {
  const trimmed = text?.trim().replace(loneSurrogate, '\uFFFD') ?? '';
  return trimmed === '' ? null : trimmed;
}
