import Database from 'better-sqlite3';
import type pg from 'pg';
import { retryWhileBusy } from '../chat-store/sqlite-busy.js';
import type { Query, Row, UsageSql } from './usage-sql.js';

/** As Prisma's better-sqlite3 adapter writes DateTime: ISO text, so text order is time order. */
function sqliteValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('Z', '+00:00');
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

/**
 * SQLite: a connection of its own. A transaction is begun and committed with nothing but
 * already-settled promises in between (every statement here is synchronous), so it never spans
 * an event-loop turn; calls are queued, since the one connection holds one transaction at a time.
 */
export function sqliteUsageSql(path: string): UsageSql {
  // No busy timeout, as the chat store: another connection's lock is waited for between turns.
  const db = new Database(path, { timeout: 0 });
  db.pragma('synchronous = NORMAL');
  const statements = new Map<string, Database.Statement>();
  const run = (sql: string, params: readonly unknown[] = []): Row[] => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    const values = params.map(sqliteValue);
    if (statement.reader) return statement.all(...values) as Row[];
    statement.run(...values);
    return [];
  };
  const query: Query = (sql, params) => Promise.resolve(run(sql, params));
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  let queue: Promise<unknown> = Promise.resolve();
  // SQLite has one writer: every transaction here holds every user's lock.
  const exclusive = <T>(work: (query: Query) => Promise<T>): Promise<T> => {
    const turn = queue.then(async () => {
      await retryWhileBusy(() => begin.run());
      try {
        const result = await work(query);
        commit.run();
        return result;
      } catch (error) {
        if (db.inTransaction) rollback.run();
        throw error;
      }
    });
    queue = turn.catch(() => undefined);
    return turn;
  };
  return {
    kind: 'sqlite',
    query,
    locked: (_userId, work) => exclusive(work),
    lockedMany: (_userIds, work) => exclusive(work),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}

/** `?` placeholders as PostgreSQL's numbered ones. */
function numbered(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${++index}`);
}

function postgresValue(value: unknown): unknown {
  // Cast by the column to timestamp(3), as Prisma writes its DateTime columns: UTC, zone dropped.
  return value instanceof Date ? value.toISOString() : value;
}

/** PostgreSQL: the service's pool; a user's lock is a transaction-scoped advisory lock. */
export function postgresUsageSql(pool: pg.Pool): UsageSql {
  const texts = new Map<string, string>();
  const text = (sql: string) => {
    let converted = texts.get(sql);
    if (converted === undefined) {
      converted = numbered(sql);
      texts.set(sql, converted);
    }
    return converted;
  };
  const on =
    (client: pg.Pool | pg.PoolClient): Query =>
    async (sql, params = []) =>
      (await client.query(text(sql), params.map(postgresValue))).rows as Row[];
  const lockedMany = async <T>(userIds: readonly string[], work: (query: Query) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const userId of [...new Set(userIds)].sort()) {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended('quota:' || $1, 0))", [userId]);
      }
      const result = await work(on(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
  return {
    kind: 'postgresql',
    query: on(pool),
    locked: (userId, work) => lockedMany([userId], work),
    lockedMany,
    // The pool is the database's; it closes it.
    close: () => Promise.resolve(),
  };
}
