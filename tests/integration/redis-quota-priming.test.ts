import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { connectRedis, type RedisConnection } from '../../src/core/redis/redis-connection.js';
import type { CallUsage, LeaseAsk } from '../../src/core/usage/quota-book.js';
import { RedisQuotaBook } from '../../src/core/usage/redis-quota-book.js';
import { periodsOf } from '../../src/core/usage/usage-ledger.js';
import type { UsageSql } from '../../src/core/usage/usage-sql.js';
import { sqliteUsageSql } from '../../src/core/usage/usage-sql-drivers.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';

// A racing process against the Redis quota book's priming (CONTRACT §13): when a user's totals
// for a period are not in Redis yet (a new period, a flushed Redis), the first reservation copies
// them from the database. Another instance settling one of the user's calls between that read
// and the copy used to be lost: its settle found no key to add to, and the copy did not hold it
// either, so the quota was short by that call for the rest of the period. The settle now commits
// to the database first and counts itself in Redis, and a copy made while a settle ran is read
// again. The race is forced here: the priming read is held until the other settle is done.

const user = 'racer';
const options = { instance: 'test', leaseMs: 60_000, costOf: () => null };

function usage(tokens: number, startedAt: number): CallUsage {
  return { userId: user, provider: 'ollama', model: 'llama3.2', inputTokens: tokens, outputTokens: 0, estimated: false, costMicros: null, outcome: 'completed', conversationId: null, startedAt };
}

describe.skipIf(!redisAvailable)('Redis quota priming against a settle racing it', () => {
  let database: TestDatabase;
  let sql: UsageSql;
  let redis: RedisConnection;
  let books: RedisQuotaBook[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    await migrate(database.url);
    sql = sqliteUsageSql(sqliteFilePath(database.url));
    redis = await connectRedis(redisUrl, freshRedisPrefix(), createLogger('silent'));
  });

  afterAll(async () => {
    for (const book of books) await book.close();
    await redis.close();
    await sql.close();
    await database.drop();
  });

  it('a call settled by another instance while the totals are copied into Redis is counted, not lost', async () => {
    const now = Date.now();
    // Another instance's book, on the same database and Redis.
    const other = new RedisQuotaBook(redis, sql, options);
    // This instance's book reads the totals through a query that can be held at the read.
    let hold: { reached: () => void; release: Promise<void> } | null = null;
    const held: UsageSql = {
      ...sql,
      kind: sql.kind,
      query: async (text, values) => {
        if (hold !== null && /"UsageTotal"/.test(text)) {
          const { reached, release } = hold;
          hold = null;
          const rows = await sql.query(text, values);
          reached();
          await release;
          return rows;
        }
        return sql.query(text, values);
      },
      locked: (userId, work) => sql.locked(userId, work),
      lockedMany: (userIds, work) => sql.lockedMany(userIds, work),
      close: () => Promise.resolve(),
    };
    const mine = new RedisQuotaBook(redis, held, options);
    books = [other, mine];
    // 100 tokens already used today, in the database only (no totals key in Redis yet).
    await other.settle([{ lease: null, usage: usage(100, now) }]);

    let reached!: () => void;
    const atRead = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    hold = { reached, release: new Promise<void>((resolve) => (release = resolve)) };
    const ask: LeaseAsk = {
      userId: user,
      provider: 'ollama',
      model: 'llama3.2',
      limits: [{ window: 'day', metric: 'tokens', limit: 1000 }],
      ask: { inputTokens: 10, outputLimit: 10_000, price: null },
      inputEstimate: 10,
      conversationId: null,
      answerId: null,
      startedAt: now,
    };
    const reservation = mine.reserve(ask);
    // The priming read has the 100; now another instance settles a call of 500 before the copy.
    await atRead;
    await other.settle([{ lease: null, usage: usage(500, now) }]);
    release();
    const reply = await reservation;
    expect(reply.ok).toBe(true);
    // 1000 − 600 used − 10 input: the 500 is counted.
    if (reply.ok) expect(reply.lease.outputTokens).toBe(390);
    const day = await redis.client.hGet(`${redis.keyPrefix}quota:${user}:day:${periodsOf(now).day}`, 't');
    expect(Number(day)).toBe(600);
  });
});
