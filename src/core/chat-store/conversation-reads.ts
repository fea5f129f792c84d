import type { Prisma } from '../../generated/sqlite/client.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';

// The conversation list and a conversation's messages, the REST API's busiest reads, as prepared
// statements on the drivers (like the chat store beside it): through Prisma's query engine half of
// a list request's CPU time went to the engine itself (BENCHMARKS.md, "REST and storage"). One
// implementation per database; tests hold both to what Prisma reads.

export interface ListQuery {
  ownerId: string;
  limit: number;
  offset: number;
  /** A case-insensitive substring of the title or of any message; absent or blank lists all. */
  text?: string | undefined;
}

export interface ListedPage {
  rows: ConversationSummaryRow[];
  total: number;
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

/**
 * A LIKE pattern matching `text` anywhere, with LIKE's own wildcards (`%`, `_`) and the escape
 * character taken literally, as Prisma's `contains` does. Use with `ESCAPE '\\'`.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
