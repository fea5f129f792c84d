import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createLogger } from '../../src/core/logger.js';
import { DatabaseQuotaBook } from '../../src/core/usage/database-quota-book.js';
import type { PolicyBook } from '../../src/core/usage/policy-book.js';
import type { CallUsage, SettledCall } from '../../src/core/usage/quota-book.js';
import { UsageMeter } from '../../src/core/usage/usage-meter.js';
import { readWindowTotals, recordCalls } from '../../src/core/usage/usage-ledger.js';
import type { UsageSql } from '../../src/core/usage/usage-sql.js';
import { postgresUsageSql, sqliteUsageSql } from '../../src/core/usage/usage-sql-drivers.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';

// A settle records the calls that ended within a few milliseconds together (usage-ledger.ts
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

  it('records a batch larger than one statement holds, each entry once, against entries already there', async () => {
    const now = Date.now();
    // 1,201 calls, more than two statements hold (512 rows each). Every 100th has an id that an
    // earlier batch recorded (a lease the sweep settled first), and one id comes twice within the batch.
    await sql.lockedMany(['cat'], (query) => recordCalls(query, Array.from({ length: 12 }, (_, i) => ({ usage: call('cat', 1, 1, now), entryId: `old-${i}` }))));
    const calls = Array.from({ length: 1201 }, (_, i) => ({ usage: call('cat', 2, 3, now), entryId: i % 100 === 0 ? `old-${i / 100}` : `new-${i}` }));
    calls.push({ usage: call('cat', 2, 3, now), entryId: 'new-7' });
    const statements: string[] = [];
    const recorded = await sql.lockedMany(['cat'], (query) =>
      recordCalls((text, params) => {
        statements.push(text.slice(0, 24));
        return query(text, params);
      }, calls),
    );
    // 1,201 distinct ids in slices of 512, 512, 128, 32, 16, 1; the three totals in 2 and 1.
    expect(statements.filter((text) => text.startsWith('INSERT INTO "UsageEntry"'))).toHaveLength(6);
    expect(statements.filter((text) => text.startsWith('INSERT INTO "UsageTotal"'))).toHaveLength(2);
    expect(recorded.filter((r) => !r)).toHaveLength(13);
    expect(recorded.slice(0, 3)).toEqual([false, true, true]);
    expect(recorded.at(-1)).toBe(false);
    const [count] = await sql.query(`SELECT count(*) AS n FROM "UsageEntry" WHERE "userId" = 'cat'`);
    expect(Number(count?.n)).toBe(12 + 1201 - 13 + 1);
    const totals = await readWindowTotals(sql.query, 'cat', now);
    // 12 old calls of 2 tokens and 1 micro-dollar; 1,189 new ones of 3 tokens and 3.
    expect(totals.get('month')).toEqual({ tokens: 12 * 2 + 1189 * 3, costMicros: 12 + 1189 * 3, requests: 12 + 1189 });
  });

  /** A meter over this suite's ledger whose book counts the calls in each settle. */
  function countingMeter(limitsOf: (userId: string) => { window: 'day'; metric: 'tokens'; limit: number }[]) {
    const book = new DatabaseQuotaBook(sql, { instance: 'batch-test', leaseMs: 30_000, costOf: () => null });
    const batches: number[] = [];
    const counting = Object.assign(Object.create(book) as DatabaseQuotaBook, {
      settle: (calls: readonly SettledCall[]) => {
        batches.push(calls.length);
        return book.settle(calls);
      },
    });
    const policies = { limitsFor: (user: { id: string }) => limitsOf(user.id) } as unknown as PolicyBook;
    const meter = new UsageMeter(counting, policies, new Map(), { outputTokens: 1000, leaseMs: 30_000, sql }, createLogger('silent'));
    const call = (userId: string) =>
      meter.begin({
        user: { id: userId, roles: ['User'], permissions: new Set() },
        provider: 'ollama',
        model: 'm',
        call: { system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] },
        maxTokens: undefined,
        conversationId: null,
        answerId: null,
      });
    return { meter, batches, call };
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it('settles calls that end one after another, turns apart, in one transaction, and records each', async () => {
    // No limits hold: the ledger write is all a call costs (a sequential client's case).
    const { meter, batches, call } = countingMeter(() => []);
    try {
      for (let i = 0; i < 10; i++) {
        (await call('sequential')).end({ usage: { inputTokens: 3, outputTokens: 4 }, text: 'four', outcome: 'completed' });
        // The next exchange comes a turn later, as a client's next request does.
        await nextTurn();
      }
      await meter.settled();
    } finally {
      // Stops its timer; the book holds no connection of its own (the suite closes `sql`).
      await meter.close();
    }
    // One settle (two if a slow machine spread the ten calls past the settle's wait): per turn, it was ten.
    expect(batches.reduce((sum, n) => sum + n, 0)).toBe(10);
    expect(batches.length).toBeLessThanOrEqual(2);
    const totals = await readWindowTotals(sql.query, 'sequential', Date.now());
    expect(totals.get('day')).toEqual({ tokens: 70, costMicros: 0, requests: 10 });
  });

  it('settles a call holding a reservation at the next turn, so the caller asking again finds it released', async () => {
    // 1,500 tokens a day: one call's reservation (its prompt and 1,000 of output) fits, two do not.
    const { meter, batches, call } = countingMeter((userId) => (userId === 'near-its-limit' ? [{ window: 'day', metric: 'tokens', limit: 1500 }] : []));
    try {
      for (let i = 0; i < 3; i++) {
        // An unlimited caller's call waits to be batched; the reserved one after it must not wait with it.
        (await call('unlimited')).end({ usage: { inputTokens: 1, outputTokens: 1 }, text: 'x', outcome: 'completed' });
        (await call('near-its-limit')).end({ usage: { inputTokens: 3, outputTokens: 4 }, text: 'four', outcome: 'completed' });
        await nextTurn();
        await nextTurn();
        // Settled already, with the unlimited call beside it: the next reservation is not refused for this one's.
        expect(batches.reduce((sum, n) => sum + n, 0), `call ${i}`).toBe(2 * (i + 1));
      }
      await meter.settled();
    } finally {
      await meter.close();
    }
    const totals = await readWindowTotals(sql.query, 'near-its-limit', Date.now());
    expect(totals.get('day')).toEqual({ tokens: 21, costMicros: 0, requests: 3 });
  });
});
