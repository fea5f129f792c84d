import { createHash } from 'node:crypto';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { RedisClient, RedisConnection } from '../redis/redis-connection.js';
import { withTimeout } from '../redis/redis-timeout.js';
import { quotaWindows, type QuotaWindow } from './policy-document.js';
import type { Lease, LeaseAsk, QuotaBook, QuotaBookOptions, Refusal, SettledCall } from './quota-book.js';
import type { LimitRow } from './quota-decision.js';
import { periodEnd } from './quota-periods.js';
import { primeScript, reserveScript, settleScript, sweepScript } from './redis-quota-script.js';
import { recoveredUsage } from './database-quota-book.js';
import { periodsOf, readWindowTotals, recordCall, recordCalls, recordedUse } from './usage-ledger.js';
import type { UsageSql } from './usage-sql.js';
import { estimateStoredAnswer } from './token-estimate.js';

/** Totals keys outlive their period by a day, so a late settle still finds its key. */
const TOTALS_GRACE_MS = 86_400_000;

/** A user's settle count outlives every period a prime could be reading totals for. */
function settleCountKeptUntil(): number {
  return Date.now() + 32 * 86_400_000 + TOTALS_GRACE_MS;
}

const shas = new Map<string, string>();

function shaOf(script: string): string {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  return sha;
}

function redisDown(cause: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'Quotas cannot be checked while Redis is unreachable; try again', { cause });
}

/**
 * Reservations in Redis (REDIS_URL, CONTRACT §13): one Lua script decides and records each, so
 * instances sharing Redis admit calls one after another. The settled totals in Redis are a cache
 * of the database's (filled from it when missing); the database's ledger stays the record.
 */
export class RedisQuotaBook implements QuotaBook {
  /**
   * A connection of its own: the reservation sits before every provider call, and on the shared
   * connection it would queue behind the stream mirror's writes.
   */
  private readonly client: RedisClient;
  /** The first connection: a call made before it is up (the start's sweep) waits for it. */
  private readonly connecting: Promise<unknown>;

  constructor(
    private readonly redis: RedisConnection,
    private readonly sql: UsageSql,
    private readonly options: QuotaBookOptions,
  ) {
    this.client = redis.client.duplicate();
    // The shared connection reports Redis's state; without a listener errors would crash the process.
    this.client.on('error', () => undefined);
    this.connecting = this.client.connect().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.client.isReady) await this.client.close();
    else if (this.client.isOpen) this.client.destroy();
  }

  private leasesKey(userId: string): string {
    return `${this.redis.keyPrefix}quota:${userId}:leases`;
  }

  private totalsKeys(userId: string, at: number): string[] {
    const periods = periodsOf(at);
    return quotaWindows.map((window) => `${this.redis.keyPrefix}quota:${userId}:${window}:${periods[window]}`);
  }

  /** How many of the user's calls were settled, for priming (primeScript). */
  private settlesKey(userId: string): string {
    return `${this.redis.keyPrefix}quota:${userId}:settles`;
  }

  private get expiryKey(): string {
    return `${this.redis.keyPrefix}quota:expiry`;
  }

  private member(userId: string, leaseId: string): string {
    return `${userId}\n${leaseId}`;
  }

  /**
   * Runs a script by its SHA (the body is sent once, not with every call before a provider call);
   * a Redis that lost its script cache (a restart, a flush) is sent the body again.
   */
  private async eval(script: string, keys: string[], args: (string | number)[]): Promise<unknown> {
    const sha = shaOf(script);
    const rest = [String(keys.length), ...keys, ...args.map(String)];
    // Before the first connection is up a command would fail at once ("The client is offline"),
    // and the start's sweep of lapsed leases logged a warning every time; after it, a Redis that
    // went away fails closed as before.
    if (!this.client.isReady) await withTimeout(this.connecting).catch(() => undefined);
    try {
      return await withTimeout(this.client.sendCommand(['EVALSHA', sha, ...rest]));
    } catch (error) {
      if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw redisDown(error);
    }
    try {
      return await withTimeout(this.client.sendCommand(['EVAL', script, ...rest]));
    } catch (error) {
      throw redisDown(error);
    }
  }

  async reserve(ask: LeaseAsk): Promise<{ ok: true; lease: Lease } | { ok: false; refusal: Refusal }> {
    const id = newId();
    const keys = [this.leasesKey(ask.userId), ...this.totalsKeys(ask.userId, ask.startedAt), this.expiryKey];
    const data = JSON.stringify({
      id,
      userId: ask.userId,
      provider: ask.provider,
      model: ask.model,
      inputEstimate: ask.inputEstimate,
      // The output limit asked for (the script may grant less): what a recovery charges at most.
      outputLimit: ask.ask.outputLimit,
      answerId: ask.answerId,
      conversationId: ask.conversationId,
      startedAt: ask.startedAt,
      instance: this.options.instance,
    });
    const args: (string | number)[] = [
      id,
      this.member(ask.userId, id),
      Date.now() + this.options.leaseMs,
      data,
      ask.ask.inputTokens,
      ask.ask.outputLimit,
      ask.ask.price?.input ?? -1,
      ask.ask.price?.output ?? 0,
      ask.limits.length,
      ...ask.limits.flatMap((row: LimitRow) => [quotaWindows.indexOf(row.window) + 1, row.metric, row.limit]),
    ];
    for (let attempt = 0; attempt < 4; attempt++) {
      const reply = (await this.eval(reserveScript, keys, args)) as string[];
      if (reply[0] === 'prime') {
        await this.prime(ask.userId, ask.startedAt);
        continue;
      }
      if (reply[0] === 'ok') {
        const [, output, tokens, cost] = reply.map(Number);
        return { ok: true, lease: { id, userId: ask.userId, startedAt: ask.startedAt, outputTokens: output ?? 1, tokens: tokens ?? 0, costMicros: cost ?? 0 } };
      }
      const limit = ask.limits[Number(reply[1]) - 1];
      if (!limit) break;
      return { ok: false, refusal: { limit, used: Number(reply[2]), reason: reply[3] === 'unpriced' ? 'unpriced' : 'exhausted' } };
    }
    throw new AppError('INTERNAL_ERROR', 'The quota could not be checked');
  }

  /**
   * Copies the database's settled totals for the user's current periods into Redis where missing.
   * A call settled meanwhile makes the script refuse (see primeScript): the totals are read again.
   */
  private async prime(userId: string, at: number): Promise<void> {
    const keys = this.totalsKeys(userId, at);
    const settles = this.settlesKey(userId);
    for (let attempt = 0; attempt < 8; attempt++) {
      const reply = await withTimeout(this.client.sendCommand(['GET', settles]));
      const counted = typeof reply === 'string' ? reply : '0';
      const totals = await readWindowTotals(this.sql.query, userId, at);
      const primed = await Promise.all(
        quotaWindows.map((window: QuotaWindow, index) => {
          const use = totals.get(window) ?? { tokens: 0, costMicros: 0, requests: 0 };
          return this.eval(primeScript, [keys[index] ?? '', settles], [use.tokens, use.costMicros, use.requests, periodEnd(window, at) + TOTALS_GRACE_MS, counted]);
        }),
      );
      if (primed.every((reply) => Number(reply) === 1)) return;
    }
  }

  async settle(calls: readonly SettledCall[]): Promise<void> {
    // The database first, then Redis, where each lease stops counting and its usage starts
    // counting in one step. In this order a totals key primed meanwhile never lacks a call: read
    // before the commit, the prime is refused by the settle count and read again (primeScript);
    // read after it, the call is in it (and, should the key appear before the Redis step, counted
    // twice until the period ends: too much, never too little). A Redis that cannot be reached
    // leaves the lease to lapse; the sweep finds the call already recorded (recordedUse).
    await this.sql.lockedMany(
      calls.map((call) => call.usage.userId),
      async (query) => {
        await recordCalls(
          query,
          calls.map(({ lease, usage }) => ({ usage, entryId: lease?.id })),
        );
      },
    );
    const countKept = settleCountKeptUntil();
    await Promise.all(
      calls.map(({ lease, usage }) => {
        const keys = [this.leasesKey(usage.userId), ...this.totalsKeys(usage.userId, usage.startedAt), this.expiryKey, this.settlesKey(usage.userId)];
        const args = [lease?.id ?? '', lease ? this.member(usage.userId, lease.id) : '', usage.inputTokens + usage.outputTokens, usage.costMicros ?? 0, countKept];
        return this.eval(settleScript, keys, args).catch(() => undefined);
      }),
    );
  }

  async renew(leases: readonly Lease[], expiresAt: number): Promise<void> {
    if (leases.length === 0) return;
    await withTimeout(this.client.sendCommand(['ZADD', this.expiryKey, 'XX', ...leases.flatMap((lease) => [String(expiresAt), this.member(lease.userId, lease.id)])]));
  }

  async sweep(now: number): Promise<number> {
    const claimed = (await this.eval(sweepScript, [this.expiryKey], [now, `${this.redis.keyPrefix}quota:`])) as string[];
    for (const value of claimed) {
      const data = JSON.parse(value.slice(value.indexOf(' ', value.indexOf(' ') + 1) + 1)) as Record<string, unknown>;
      // Leases stored before their data named them have no id: recorded under a new one.
      const entryId = typeof data.id === 'string' ? data.id : newId();
      const counted = await this.sql.locked(String(data.userId), async (query) => {
        const outputLimit = typeof data.outputLimit === 'number' ? data.outputLimit : Number.MAX_SAFE_INTEGER;
        const output = await estimateStoredAnswer(query, typeof data.answerId === 'string' ? data.answerId : null, outputLimit);
        const usage = recoveredUsage(data, output, this.options);
        if (await recordCall(query, usage, entryId)) return { usage, tokens: usage.inputTokens + usage.outputTokens, costMicros: usage.costMicros ?? 0 };
        // Its call was settled and recorded, but Redis was unreachable then (the lease stayed):
        // the totals here lack what the ledger holds for it.
        return { usage, ...(await recordedUse(query, entryId)) };
      });
      // Outside the database's transaction: on SQLite it must not wait on the network.
      const { usage } = counted;
      // As in settle: a Redis gone meanwhile must not leave the other claimed leases unrecorded.
      const keys = [this.leasesKey(usage.userId), ...this.totalsKeys(usage.userId, usage.startedAt), this.expiryKey, this.settlesKey(usage.userId)];
      await this.eval(settleScript, keys, ['', '', counted.tokens, counted.costMicros, settleCountKeptUntil()]).catch(() => undefined);
    }
    return claimed.length;
  }

  async standing(userId: string, now: number) {
    const used = await readWindowTotals(this.sql.query, userId, now);
    const held = { tokens: 0, costMicros: 0, count: 0 };
    const values = (await withTimeout(this.client.sendCommand(['HVALS', this.leasesKey(userId)])).catch(() => [])) as string[];
    for (const value of values) {
      const [tokens, cost] = value.split(' ').map(Number);
      held.tokens += tokens ?? 0;
      held.costMicros += cost ?? 0;
      held.count++;
    }
    return { used, held };
  }
}
