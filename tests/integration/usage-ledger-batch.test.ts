import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import type { CallUsage } from '../../src/core/usage/quota-book.js';
import { readWindowTotals, recordCalls } from '../../src/core/usage/usage-ledger.js';
import type { UsageSql } from '../../src/core/usage/usage-sql.js';
import { postgresUsageSql, sqliteUsageSql } from '../../src/core/usage/usage-sql-drivers.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';

// A settle records the calls that ended in one event-loop turn together (usage-ledger.ts
// recordCalls): one total update per user and period for all of them. The totals must be what
// one call at a time would have made, a repeated lease id (a call settled twice) counted once,
// and every user's totals their own.

function call(userId: string, tokens: number, cost: number | null, startedAt: number): CallUsage {
  return { userId, provider: 'ollama', model: 'm', inputTokens: tokens, outputTokens: 1, estimated: false, costMicros: cost, outcome: 'completed', conversationId: null, startedAt };
}

describeOnDatabases('usage ledger batches', (kind) => {
  let database: TestDatabase;
  let sql: UsageSql;
  let pool: pg.Pool | null = null;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    await migrate(database.url);
    if (kind === 'sqlite') sql = sqliteUsageSql(sqliteFilePath(database.url));
    else {
      pool = new pg.Pool({ connectionString: database.url });
      sql = postgresUsageSql(pool);
    }
  });

  afterAll(async () => {
    await sql.close();
    await pool?.end();
    await database.drop();
  });

  it('adds a batch to the totals as one call at a time would, a repeated lease once, each user apart', async () => {
    const now = Date.now();
    const recorded = await sql.lockedMany(['ann', 'bob'], (query) =>
      recordCalls(query, [
        { usage: call('ann', 10, 5, now), entryId: 'lease-1' },
        { usage: call('bob', 100, null, now) },
        { usage: call('ann', 20, 7, now) },
        // The same lease settled again in the batch: recorded once.
        { usage: call('ann', 10, 5, now), entryId: 'lease-1' },
      ]),
    );
    expect(recorded).toEqual([true, true, true, false]);
    // Another batch adds to what is there.
    await sql.lockedMany(['ann'], (query) => recordCalls(query, [{ usage: call('ann', 30, 1, now) }]));
    const ann = await readWindowTotals(sql.query, 'ann', now);
    const bob = await readWindowTotals(sql.query, 'bob', now);
    for (const window of ['minute', 'day', 'month'] as const) {
      expect(ann.get(window), window).toEqual({ tokens: 63, costMicros: 13, requests: 3 });
      expect(bob.get(window), window).toEqual({ tokens: 101, costMicros: 0, requests: 1 });
    }
  });
});
