import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PrismaBetterSQLite3 } from '@prisma/adapter-better-sqlite3';
import { PrismaClient } from '../../generated/sqlite/client.js';
import type { ChatStore } from '../chat-store/chat-store.js';
import type { ConversationReads } from '../chat-store/conversation-reads.js';
import { PostgresChatStore } from '../chat-store/postgres-chat-store.js';
import { PostgresConversationReads } from '../chat-store/postgres-conversation-reads.js';
import { SqliteChatStore } from '../chat-store/sqlite-chat-store.js';
import { SqliteConversationReads } from '../chat-store/sqlite-conversation-reads.js';
import { createPostgresPool } from './postgres-pool.js';
import { postgresUsageSql, sqliteUsageSql } from '../usage/usage-sql-drivers.js';
import type { UsageSql } from '../usage/usage-sql.js';
import type { DatabaseKind } from '../config/load-config.js';

/**
 * The service's database client. Both generated clients come from one datamodel
 * (prisma/models.prisma) and expose the same model API, so the SQLite client's type stands for
 * both; the few provider differences (case-insensitive `contains`) are handled where they occur.
 */
export type Db = PrismaClient;

export interface Database {
  db: Db;
  /** The chat engine's statements on the same database (chat-store/chat-store.ts). */
  chat: ChatStore;
  /** The conversation list and messages on the drivers (chat-store/conversation-reads.ts). */
  reads: ConversationReads;
  /** The usage ledger's and quota book's statements (core/usage/usage-sql.ts). */
  usageSql: UsageSql;
  kind: DatabaseKind;
  close(): Promise<void>;
}

/** How long a PostgreSQL query waits for a free connection, and a stop for the pool to end. */
const POOL_WAIT_MS = 10_000;
const POOL_END_MS = 5000;

/** Path of the SQLite file named by a `file:` URL, relative to the working directory. */
export function sqliteFilePath(url: string): string {
  return resolve(url.replace(/^file:/, '').replace(/\?.*$/, ''));
}

/**
 * Opens the database; it must be migrated already (the chat store prepares its statements at
 * once). `instanceId` marks the answers this process generates.
 */
export async function createDatabase(url: string, instanceId: string): Promise<Database> {
  if (url.startsWith('file:')) {
    const path = sqliteFilePath(url);
    mkdirSync(dirname(path), { recursive: true });
    // better-sqlite3's `timeout` is SQLite's busy timeout: a second process (a migration, a
    // backup) makes writers wait instead of failing at once.
    const db = new PrismaClient({ adapter: new PrismaBetterSQLite3({ url: path, timeout: 5000 }) });
    // WAL lets readers run beside the writer and keeps every committed transaction across a
    // crash; NORMAL sync is the documented safe pairing with WAL.
    await db.$queryRawUnsafe('PRAGMA journal_mode = WAL');
    await db.$executeRawUnsafe('PRAGMA synchronous = NORMAL');
    await db.$executeRawUnsafe('PRAGMA foreign_keys = ON');
    const chat = new SqliteChatStore(path, instanceId);
    const reads = new SqliteConversationReads(path);
    const usageSql = sqliteUsageSql(path);
    return {
      db,
      chat,
      reads,
      usageSql,
      kind: 'sqlite',
      close: async () => {
        await chat.close();
        await reads.close();
        await usageSql.close();
        await db.$disconnect();
      },
    };
  }
  // Loaded only for PostgreSQL: the embedded SQLite default never needs the driver, its adapter
  // or the second generated client (together ~10 MB of idle memory).
  const [{ default: pg }, { PrismaPg }, { PrismaClient: PostgresPrismaClient }] = await Promise.all([
    import('pg'),
    import('@prisma/adapter-pg'),
    import('../../generated/postgresql/client.js'),
  ]);
  // One pool for Prisma's adapter and the chat store: one set of connections to size and close.
  // A request waits at most 10 s for a connection (then 503), never forever.
  const pool = createPostgresPool(pg.Pool, { connectionString: url, connectionTimeoutMillis: POOL_WAIT_MS });
  const client = new PostgresPrismaClient({ adapter: new PrismaPg(pool) });
  const db = client as unknown as Db;
  return {
    db,
    chat: new PostgresChatStore(pool, instanceId),
    reads: new PostgresConversationReads(pool),
    usageSql: postgresUsageSql(pool),
    kind: 'postgresql',
    close: async () => {
      await client.$disconnect();
      // pool.end() waits for every checked-out client: bounded, in case one is never given back.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([pool.end(), new Promise((resolve) => (timer = setTimeout(resolve, POOL_END_MS)))]);
      clearTimeout(timer);
    },
  };
}
