import { newId } from '../ids.js';
import type { ProviderName } from '../config/env-schema.js';
import type { CallUsage, Lease, LeaseAsk, QuotaBook, QuotaBookOptions, Refusal, SettledCall } from './quota-book.js';
import { decideReservation, type HeldUse } from './quota-decision.js';
import { numberOf, readWindowTotals, recordCall, recordCalls } from './usage-ledger.js';
import { estimateStoredAnswer } from './token-estimate.js';
import type { Query, UsageSql } from './usage-sql.js';

const heldBy = `SELECT COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM("costMicros"), 0) AS cost, COUNT(*) AS count FROM "QuotaLease" WHERE "userId" = ?`;
const insertLease = `INSERT INTO "QuotaLease" (id, "userId", tokens, "costMicros", instance, "expiresAt", "startedAt", provider, model, "inputEstimate", "answerId", "conversationId")
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const deleteLease = `DELETE FROM "QuotaLease" WHERE id = ?`;
const renewLeases = `UPDATE "QuotaLease" SET "expiresAt" = ? WHERE instance = ?`;
const lapsed = `SELECT id FROM "QuotaLease" WHERE "expiresAt" < ? ORDER BY "expiresAt" LIMIT 100`;
const claimLease = `DELETE FROM "QuotaLease" WHERE id = ? AND "expiresAt" < ? RETURNING "userId", provider, model, tokens, "inputEstimate", "answerId", "conversationId", "startedAt"`;

export async function heldOf(query: Query, userId: string): Promise<HeldUse> {
  const [row] = await query(heldBy, [userId]);
  return { tokens: numberOf(row?.tokens), costMicros: numberOf(row?.cost), count: numberOf(row?.count) };
}

/**
 * Reservations in the database (no REDIS_URL): each is decided under the user's lock (an
 * immediate transaction on SQLite, an advisory lock on PostgreSQL), so concurrent calls for one
 * user, from one instance or several sharing the database, are admitted one after another.
 */
export class DatabaseQuotaBook implements QuotaBook {
  constructor(
    private readonly sql: UsageSql,
    private readonly options: QuotaBookOptions,
  ) {}

  reserve(ask: LeaseAsk): Promise<{ ok: true; lease: Lease } | { ok: false; refusal: Refusal }> {
    return this.sql.locked(ask.userId, async (query) => {
      const used = await readWindowTotals(query, ask.userId, ask.startedAt);
      const held = await heldOf(query, ask.userId);
      const decision = decideReservation(ask.limits, used, held, ask.ask);
      if (!decision.ok) return { ok: false as const, refusal: { limit: decision.limit, used: decision.used, reason: decision.reason } };
      const lease: Lease = { id: newId(), userId: ask.userId, startedAt: ask.startedAt, outputTokens: decision.outputTokens, tokens: decision.tokens, costMicros: decision.costMicros };
      await query(insertLease, [
        lease.id,
        ask.userId,
        lease.tokens,
        lease.costMicros,
        this.options.instance,
        Date.now() + this.options.leaseMs,
        ask.startedAt,
        ask.provider,
        ask.model,
        ask.inputEstimate,
        ask.answerId,
        ask.conversationId,
      ]);
      return { ok: true as const, lease };
    });
  }

  settle(calls: readonly SettledCall[]): Promise<void> {
    return this.sql.lockedMany(
      calls.map((call) => call.usage.userId),
      async (query) => {
        for (const { lease } of calls) if (lease) await query(deleteLease, [lease.id]);
        // A lease the sweep took meanwhile (this instance stalled past its expiry) was recorded then.
        await recordCalls(
          query,
          calls.map(({ lease, usage }) => ({ usage, entryId: lease?.id })),
        );
      },
    );
  }

  async renew(leases: readonly Lease[], expiresAt: number): Promise<void> {
    if (leases.length === 0) return;
    await this.sql.query(renewLeases, [expiresAt, this.options.instance]);
  }

  async sweep(now: number): Promise<number> {
    const rows = await this.sql.query(lapsed, [now]);
    let settled = 0;
    for (const { id } of rows) {
      const claimed = await this.claim(String(id), now);
      if (claimed) settled++;
    }
    return settled;
  }

  async standing(userId: string, now: number) {
    return { used: await readWindowTotals(this.sql.query, userId, now), held: await heldOf(this.sql.query, userId) };
  }

  /** Settles one lapsed lease unless another instance claimed it first. */
  private async claim(id: string, now: number): Promise<boolean> {
    const [row] = await this.sql.query(`SELECT "userId" FROM "QuotaLease" WHERE id = ?`, [id]);
    if (!row) return false;
    return this.sql.locked(String(row.userId), async (query) => {
      const [lease] = await query(claimLease, [id, now]);
      if (!lease) return false;
      // The lease holds the prompt's worst case and the output granted together.
      const outputLimit = Math.max(0, numberOf(lease.tokens) - numberOf(lease.inputEstimate));
      const output = await estimateStoredAnswer(query, typeof lease.answerId === 'string' ? lease.answerId : null, outputLimit);
      await recordCall(query, recoveredUsage(lease, output, this.options), id);
      return true;
    });
  }
}

/** A lapsed lease as the ledger records it: the prompt's estimate, and what its answer stored. */
export function recoveredUsage(lease: Record<string, unknown>, outputTokens: number, options: Pick<QuotaBookOptions, 'costOf'>): CallUsage {
  const provider = String(lease.provider) as ProviderName;
  const model = String(lease.model);
  const inputTokens = numberOf(lease.inputEstimate);
  return {
    userId: String(lease.userId),
    provider,
    model,
    inputTokens,
    outputTokens,
    estimated: true,
    costMicros: options.costOf(provider, model, inputTokens, outputTokens),
    outcome: 'recovered',
    conversationId: typeof lease.conversationId === 'string' ? lease.conversationId : null,
    startedAt: numberOf(lease.startedAt),
  };
}
