import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaWindows } from '../../src/core/usage/policy-document.js';
import { decideReservation, type Decision, type HeldUse, type LimitRow, type ReservationAsk, type WindowUse } from '../../src/core/usage/quota-decision.js';
import { reserveScript } from '../../src/core/usage/redis-quota-script.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';

// The reservation rule is written twice: in TypeScript for the database books and in Lua for
// Redis. Every case here runs through both, and both must decide the same.

interface Case {
  name: string;
  limits: LimitRow[];
  used: Partial<Record<(typeof quotaWindows)[number], WindowUse>>;
  held: HeldUse;
  ask: ReservationAsk;
  expected: Decision;
}

const none: HeldUse = { tokens: 0, costMicros: 0, count: 0 };
const ask = (inputTokens: number, outputLimit: number, price: ReservationAsk['price'] = null): ReservationAsk => ({ inputTokens, outputLimit, price });

const cases: Case[] = [
  { name: 'no limits: the whole output limit', limits: [], used: {}, held: none, ask: ask(100, 500), expected: { ok: true, outputTokens: 500, tokens: 600, costMicros: 0 } },
  {
    name: 'a request limit counts running calls',
    limits: [{ window: 'day', metric: 'requests', limit: 3 }],
    used: { day: { tokens: 0, costMicros: 0, requests: 1 } },
    held: { tokens: 10, costMicros: 0, count: 2 },
    ask: ask(10, 10),
    expected: { ok: false, limit: { window: 'day', metric: 'requests', limit: 3 }, used: 3, reason: 'exhausted' },
  },
  {
    name: 'a request limit with room leaves the output as asked',
    limits: [{ window: 'minute', metric: 'requests', limit: 3 }],
    used: { minute: { tokens: 0, costMicros: 0, requests: 1 } },
    held: { tokens: 10, costMicros: 0, count: 1 },
    ask: ask(10, 700),
    expected: { ok: true, outputTokens: 700, tokens: 710, costMicros: 0 },
  },
  {
    name: 'a token limit cuts the output to what is left',
    limits: [{ window: 'day', metric: 'tokens', limit: 1000 }],
    used: { day: { tokens: 300, costMicros: 0, requests: 4 } },
    held: { tokens: 200, costMicros: 0, count: 1 },
    ask: ask(400, 500),
    expected: { ok: true, outputTokens: 100, tokens: 500, costMicros: 0 },
  },
  {
    name: 'a token limit with no room for one output token refuses',
    limits: [{ window: 'day', metric: 'tokens', limit: 1000 }],
    used: { day: { tokens: 300, costMicros: 0, requests: 4 } },
    held: { tokens: 300, costMicros: 0, count: 1 },
    ask: ask(400, 500),
    expected: { ok: false, limit: { window: 'day', metric: 'tokens', limit: 1000 }, used: 600, reason: 'exhausted' },
  },
  {
    name: 'the tightest of several windows decides',
    limits: [
      { window: 'minute', metric: 'tokens', limit: 900 },
      { window: 'month', metric: 'tokens', limit: 100_000 },
    ],
    used: { minute: { tokens: 100, costMicros: 0, requests: 1 }, month: { tokens: 99_700, costMicros: 0, requests: 50 } },
    held: none,
    ask: ask(50, 1000),
    expected: { ok: true, outputTokens: 250, tokens: 300, costMicros: 0 },
  },
  {
    name: 'a cost limit refuses a model without a price',
    limits: [{ window: 'month', metric: 'costUsd', limit: 5_000_000 }],
    used: {},
    held: none,
    ask: ask(10, 10),
    expected: { ok: false, limit: { window: 'month', metric: 'costUsd', limit: 5_000_000 }, used: 0, reason: 'unpriced' },
  },
  {
    name: 'a cost limit cuts the output to what it can still pay',
    limits: [{ window: 'month', metric: 'costUsd', limit: 1_000 }],
    used: { month: { tokens: 0, costMicros: 400, requests: 2 } },
    held: { tokens: 0, costMicros: 100, count: 1 },
    ask: ask(1000, 10_000, { input: 0.15, output: 0.6 }),
    expected: { ok: true, outputTokens: 583, tokens: 1583, costMicros: 500 },
  },
  {
    name: 'a cost limit that cannot pay the prompt refuses',
    limits: [{ window: 'month', metric: 'costUsd', limit: 1_000 }],
    used: { month: { tokens: 0, costMicros: 900, requests: 2 } },
    held: none,
    ask: ask(1000, 10, { input: 0.15, output: 0.6 }),
    expected: { ok: false, limit: { window: 'month', metric: 'costUsd', limit: 1_000 }, used: 900, reason: 'exhausted' },
  },
];

describe('the reservation rule in TypeScript', () => {
  it.each(cases)('$name', ({ limits, used, held, ask: request, expected }) => {
    expect(decideReservation(limits, new Map(Object.entries(used)) as Map<(typeof quotaWindows)[number], WindowUse>, held, request)).toEqual(expected);
  });
});

describe.runIf(redisAvailable)('the reservation rule in Lua decides as the TypeScript one', () => {
  const client = createClient({ url: redisUrl });
  const prefix = freshRedisPrefix();
  beforeAll(async () => {
    await client.connect();
  });
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    await client.close();
  });

  it.each(cases.map((entry, index) => ({ ...entry, index })))('$name', async ({ limits, used, held, ask: request, expected, index }) => {
    const base = `${prefix}${index}:`;
    const totals = quotaWindows.map((window) => `${base}${window}`);
    for (const [position, window] of quotaWindows.entries()) {
      const use = used[window] ?? { tokens: 0, costMicros: 0, requests: 0 };
      await client.hSet(totals[position] ?? '', { t: use.tokens, c: use.costMicros, r: use.requests });
    }
    // The running calls as one lease holding their sum, and one empty lease per further call.
    for (let lease = 0; lease < held.count; lease++) {
      await client.hSet(`${base}leases`, `held-${lease}`, lease === 0 ? `${held.tokens} ${held.costMicros} {}` : '0 0 {}');
    }
    const reply: string[] = await client.sendCommand<string[]>([
      'EVAL',
      reserveScript,
      '5',
      `${base}leases`,
      ...totals,
      `${base}expiry`,
      'new-lease',
      'member',
      String(Date.now() + 60_000),
      '{}',
      String(request.inputTokens),
      String(request.outputLimit),
      String(request.price?.input ?? -1),
      String(request.price?.output ?? 0),
      String(limits.length),
      ...limits.flatMap((row) => [String(quotaWindows.indexOf(row.window) + 1), row.metric, String(row.limit)]),
    ]);
    const decided: Decision =
      reply[0] === 'ok'
        ? { ok: true, outputTokens: Number(reply[1]), tokens: Number(reply[2]), costMicros: Number(reply[3]) }
        : { ok: false, limit: limits[Number(reply[1]) - 1] as LimitRow, used: Number(reply[2]), reason: reply[3] as 'exhausted' | 'unpriced' };
    expect(decided).toEqual(expected);
    // Admitted: the lease is recorded; refused: nothing is.
    expect(Boolean(await client.hExists(`${base}leases`, 'new-lease'))).toBe(expected.ok);
  });
});
