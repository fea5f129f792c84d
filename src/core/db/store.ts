import type { Prisma } from '../../generated/sqlite/client.js';
import type { ChatStore } from '../chat-store/chat-store.js';
import type { ConversationReads } from '../chat-store/conversation-reads.js';
import type { DatabaseKind } from '../config/load-config.js';
import type { Db } from './create-db.js';

/** What the domain functions need of storage. */
export interface Store {
  db: Db;
  /** The chat engine's hot path, on the drivers themselves (chat-store/chat-store.ts). */
  chat: ChatStore;
  /** The conversation list and messages, on the drivers too (chat-store/conversation-reads.ts). */
  reads: ConversationReads;
  kind: DatabaseKind;
}

/**
 * A case-insensitive substring filter. SQLite's LIKE already folds ASCII case; PostgreSQL needs
 * `mode: "insensitive"`, which the SQLite client's types (standing for both) do not declare.
 */
export function containsText(kind: DatabaseKind, text: string): Prisma.StringFilter {
  const insensitive = { contains: text, mode: 'insensitive' };
  return kind === 'postgresql' ? insensitive : { contains: text };
}

/** A JSON column value as the plain object the API shows (null and non-objects become {}). */
export function jsonObject(value: Prisma.JsonValue | null | undefined): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
}
