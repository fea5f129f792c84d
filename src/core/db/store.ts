import type { Prisma } from '../../generated/sqlite/client.js';
import type { ChatStore } from '../chat-store/chat-store.js';
import type { ConversationReads } from '../chat-store/conversation-reads.js';
import type { DatabaseKind } from '../config/load-config.js';
import type { Db } from './create-db.js';
import type { UsageSql } from '../usage/usage-sql.js';

/** What the domain functions need of storage. */
export interface Store {
  db: Db;
  /** The chat engine's hot path, on the drivers themselves (chat-store/chat-store.ts). */
  chat: ChatStore;
  /** The conversation list and messages, on the drivers too (chat-store/conversation-reads.ts). */
  reads: ConversationReads;
  /** The usage ledger and quota book on the drivers (core/usage/usage-sql.ts). */
  usageSql: UsageSql;
  kind: DatabaseKind;
}

/** A JSON column value as the plain object the API shows (null and non-objects become {}). */
export function jsonObject(value: Prisma.JsonValue | null | undefined): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
}
