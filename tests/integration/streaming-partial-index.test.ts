import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeInterruptedAnswers } from '../../src/core/conversations/close-interrupted-answers.js';
import { createDatabase, sqliteFilePath, type Database, type Db } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import type { Store } from '../../src/core/db/store.js';
import { createTestDatabase, describeOnDatabases, type DatabaseKind, type TestDatabase } from '../helpers/databases.js';

// The message_streaming_partial migration (issue 24): no index on "streaming" takes an entry for
// every closed message any more; only the answers still streaming are indexed, and
// closeInterruptedAnswers must still find them without reading the closed ones.

const CLOSED = 100_000;

/** A statement closeInterruptedAnswers sent, with its placeholders as the driver sees them. */
interface Sent {
  sql: string;
  values: unknown[];
}

/** The store's client, recording the raw statements sent through it (and still running them). */
function recording(db: Db, kind: DatabaseKind, sent: Sent[]): Db {
  return new Proxy(db, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if ((key !== '$queryRaw' && key !== '$executeRaw') || typeof value !== 'function') return value;
      return (strings: TemplateStringsArray, ...values: unknown[]) => {
        const sql = strings.reduce((text, part, index) => `${text}${kind === 'sqlite' ? '?' : `$${String(index)}`}${part}`);
        sent.push({ sql, values });
        return (value as (s: TemplateStringsArray, ...v: unknown[]) => unknown).call(target, strings, ...values);
      };
    },
  });
}

/** Runs SQL on the database's own driver, outside Prisma. */
async function onDriver<T>(database: TestDatabase, work: (run: (sql: string, values?: unknown[]) => Promise<Record<string, unknown>[]>) => Promise<T>): Promise<T> {
  if (database.kind === 'sqlite') {
    const raw = new BetterSqlite3(sqliteFilePath(database.url));
    try {
      return await work((sql, values = []) => {
        const statement = raw.prepare(sql);
        return Promise.resolve(statement.reader ? (statement.all(...values) as Record<string, unknown>[]) : (statement.run(...values), []));
      });
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await work(async (sql, values = []) => (await client.query(sql, values)).rows as Record<string, unknown>[]);
  } finally {
    await client.end();
  }
}

describeOnDatabases('the streaming answers index', (kind) => {
  let database: TestDatabase;
  let opened: Database;

  beforeEach(async () => {
    database = await createTestDatabase(kind);
    await migrate(database.url);
    opened = await createDatabase(database.url, 'instance-a');
  });

  afterEach(async () => {
    await opened.close();
    await database.drop();
  });

  it('is partial: no index of the migrated database holds the closed messages by "streaming"', async () => {
    await onDriver(database, async (run) => {
      if (kind === 'sqlite') {
        const indexes = await run(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Message'`);
        expect(indexes.map((index) => index.name)).not.toContain('Message_streaming_idx');
        // Any index that names "streaming" lists the streaming rows alone.
        for (const index of indexes.filter((row) => String(row.sql).includes('streaming'))) {
          expect(String(index.sql)).toMatch(/WHERE "streaming" = 1$/);
        }
        const partial = await run(`SELECT name, partial FROM pragma_index_list('Message') WHERE name = 'Message_growing_idx'`);
        expect(partial).toEqual([{ name: 'Message_growing_idx', partial: 1 }]);
        return;
      }
      const indexes = await run(
        `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition, pg_get_expr(i.indpred, i.indrelid) AS predicate
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = '"Message"'::regclass`,
      );
      expect(indexes.map((index) => index.name)).not.toContain('Message_streaming_idx');
      expect(indexes.filter((index) => String(index.definition).includes('streaming'))).toEqual([
        {
          name: 'Message_streaming_writer_idx',
          definition: 'CREATE INDEX "Message_streaming_writer_idx" ON public."Message" USING btree (writer) WHERE streaming',
          predicate: 'streaming',
        },
      ]);
    });
  });

  it(`closes the interrupted answers among ${String(CLOSED)} closed messages through the partial index alone`, async () => {
    await onDriver(database, async (run) => {
      await run(`INSERT INTO "Conversation" (id, "ownerId", "createdAt", "lastModified") VALUES ('c', 'ann', '2026-01-01', '2026-01-01')`);
      // Closed answers of every writer, then 12 streaming: instance-b, -c, -d and none, 3 each.
      const fill =
        kind === 'sqlite'
          ? `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${String(CLOSED + 11)})
             INSERT INTO "Message" (id, "conversationId", seq, role, content, "finishReason", streaming, writer, "createdAt")
             SELECT 'm' || i, 'c', i, 'assistant', 'closed', CASE WHEN i < ${String(CLOSED)} THEN 'stop' END, i >= ${String(CLOSED)},
                    CASE i % 4 WHEN 0 THEN 'instance-b' WHEN 1 THEN 'instance-c' WHEN 2 THEN 'instance-d' END, '2026-01-01' FROM n`
          : `INSERT INTO "Message" (id, "conversationId", seq, role, content, "finishReason", streaming, writer, "createdAt")
             SELECT 'm' || i, 'c', i, 'assistant', 'closed', CASE WHEN i < ${String(CLOSED)} THEN 'stop' END, i >= ${String(CLOSED)},
                    CASE i % 4 WHEN 0 THEN 'instance-b' WHEN 1 THEN 'instance-c' WHEN 2 THEN 'instance-d' END, '2026-01-01'
             FROM generate_series(0, ${String(CLOSED + 11)}) i`;
      await run(fill);
    });

    const sent: Sent[] = [];
    const store: Store = { ...opened, db: recording(opened.db, kind, sent) };
    // instance-b lives; instance-a (this one) has none; -c, -d and the writerless are closed.
    const closed = await closeInterruptedAnswers(store, 'instance-a', (writer) => Promise.resolve(writer === 'instance-b'));
    expect(closed).toBe(9);
    const states = await opened.db.message.groupBy({ by: ['streaming', 'finishReason'], _count: true, orderBy: [{ streaming: 'asc' }, { finishReason: 'asc' }] });
    expect(states.map((row) => [row.streaming, row.finishReason, row._count])).toEqual([
      [false, 'error', 9],
      [false, 'stop', CLOSED],
      [true, null, 3],
    ]);
    // The writers' list, then the three dead writers' closes.
    expect(sent).toHaveLength(4);

    // Each statement sent, as planned before the table's statistics exist and after.
    await onDriver(database, async (run) => {
      for (const analyzed of [false, true]) {
        if (analyzed) await run(kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE "Message"');
        for (const { sql, values } of sent) {
          const values_ = values.map((value) => value ?? null);
          if (kind === 'sqlite') {
            const plan = (await run(`EXPLAIN QUERY PLAN ${sql}`, values_)).map((row) => String(row.detail));
            // Reads "Message" only through the partial index, never a scan of the table itself.
            expect(plan.filter((line) => /\bMessage\b/.test(line)), `${sql} (analyzed: ${String(analyzed)})`).toEqual([
              expect.stringMatching(/^SCAN Message USING (COVERING )?INDEX Message_growing_idx$/),
            ]);
          } else {
            const plan = (await run(`EXPLAIN ${sql}`, values_)).map((row) => String(row['QUERY PLAN'])).join('\n');
            expect(plan, `${sql} (analyzed: ${String(analyzed)})`).toContain('Message_streaming_writer_idx');
            expect(plan).not.toMatch(/Seq Scan|Message_pkey|Message_conversationId_seq_key/);
          }
        }
      }
    });
  }, 60_000);
});
