import { newId } from '../ids.js';
import { quotaWindows, type QuotaWindow } from './policy-document.js';
import type { CallUsage } from './quota-book.js';
import type { WindowUse } from './quota-decision.js';
import { periodStart } from './quota-periods.js';
import type { Query, Row } from './usage-sql.js';

// A leased call's entry has its lease's id: whoever settles the lease second (a settle whose
// Redis step failed, then the sweep; or a sweep that took a stalled instance's lease, then its
// settle) finds the entry there and records nothing.
const entryColumns = `INSERT INTO "UsageEntry" (id, "userId", provider, model, "inputTokens", "outputTokens", estimated, "costMicros", outcome, "conversationId", "createdAt") VALUES `;
const entryRow = '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';
const entryTail = ' ON CONFLICT (id) DO NOTHING RETURNING id';
const readEntry = `SELECT "inputTokens" + "outputTokens" AS tokens, COALESCE("costMicros", 0) AS cost FROM "UsageEntry" WHERE id = ?`;

const totalColumns = `INSERT INTO "UsageTotal" ("userId", "window", "periodStart", tokens, "costMicros", requests) VALUES `;
const totalRow = '(?, ?, ?, ?, ?, ?)';
const totalTail = ` ON CONFLICT ("userId", "window", "periodStart") DO UPDATE SET tokens = "UsageTotal".tokens + excluded.tokens,
  "costMicros" = "UsageTotal"."costMicros" + excluded."costMicros", requests = "UsageTotal".requests + excluded.requests`;

/**
 * At most this many rows per multi-row statement: 512 entries are 5,632 parameters, well inside
 * SQLite's 32,766 and PostgreSQL's 65,535.
 */
const MAX_ROWS_PER_STATEMENT = 512;

/** `head` + `count` copies of `row` + `tail`: one statement for many rows, one round trip on PostgreSQL. */
function manyRows(head: string, row: string, count: number, tail: string): string {
  return head + Array.from({ length: count }, () => row).join(', ') + tail;
}

/**
 * Runs `write` for slices of `items` in order, each a power of two long (13 items: 8, 4, 1). The
 * drivers keep each statement text they are given (SQLite prepared, PostgreSQL numbered): ten
 * sizes keep that to ten texts of each kind, where one per batch size could have been 512.
 */
async function inSlices<T>(items: readonly T[], write: (slice: readonly T[]) => Promise<void>): Promise<void> {
  let start = 0;
  while (start < items.length) {
    let size = MAX_ROWS_PER_STATEMENT;
    while (size > items.length - start) size /= 2;
    await write(items.slice(start, start + size));
    start += size;
  }
}

const readTotals = `SELECT "window", tokens, "costMicros", requests FROM "UsageTotal" WHERE "userId" = ? AND (
  ("window" = 'minute' AND "periodStart" = ?) OR ("window" = 'day' AND "periodStart" = ?) OR ("window" = 'month' AND "periodStart" = ?))`;

/** The period of each window holding `at`, in quotaWindows' order. */
export function periodsOf(at: number): Record<QuotaWindow, number> {
  return { minute: periodStart('minute', at), day: periodStart('day', at), month: periodStart('month', at) };
}

/**
 * Records one call: its ledger row and its share of the user's per-period totals, in the
 * transaction the caller holds (so a lease released in it and the usage it becomes are one step).
 * `entryId` is the call's lease id when it had one: a lease is recorded once however often it is
 * settled. Returns false (and records nothing) when that entry was recorded before.
 */
export async function recordCall(query: Query, usage: CallUsage, entryId: string = newId()): Promise<boolean> {
  const [recorded] = await recordCalls(query, [{ usage, entryId }]);
  return recorded === true;
}

/**
 * Records calls as recordCall does, in one transaction the caller holds, adding each period's
 * total once for all the calls of a user in it: a settle batches the calls that ended in one
 * event-loop turn, and under load one user's 20 calls cost 3 total updates, not 60.
 */
export async function recordCalls(query: Query, calls: readonly { usage: CallUsage; entryId?: string | undefined }[]): Promise<boolean[]> {
  const entries = calls.map(({ usage, entryId = newId() }) => ({ usage, entryId }));
  // One statement per slice of calls (a round trip each on PostgreSQL, where a settle batch under
  // load held 10–20 entries): the ids it returns are those recorded now, not before.
  // An id twice in one batch is sent once and recorded once, as by two settles one after the other.
  const seen = new Set<string>();
  const unique = entries.filter(({ entryId }) => !seen.has(entryId) && seen.add(entryId));
  const inserted = new Set<string>();
  await inSlices(unique, async (slice) => {
    const params = slice.flatMap(({ usage, entryId }) => [
      entryId,
      usage.userId,
      usage.provider,
      usage.model,
      usage.inputTokens,
      usage.outputTokens,
      usage.estimated,
      usage.costMicros,
      usage.outcome,
      usage.conversationId,
      new Date(usage.startedAt),
    ]);
    for (const row of await query(manyRows(entryColumns, entryRow, slice.length, entryTail), params)) inserted.add(String(row.id));
  });
  const totals = new Map<string, { userId: string; window: QuotaWindow; period: number; tokens: number; costMicros: number; requests: number }>();
  const recorded = entries.map(({ usage, entryId }) => {
    if (!inserted.delete(entryId)) return false;
    const periods = periodsOf(usage.startedAt);
    for (const window of quotaWindows) {
      const key = `${usage.userId}\n${window}\n${String(periods[window])}`;
      const total = totals.get(key) ?? { userId: usage.userId, window, period: periods[window], tokens: 0, costMicros: 0, requests: 0 };
      total.tokens += usage.inputTokens + usage.outputTokens;
      total.costMicros += usage.costMicros ?? 0;
      total.requests += 1;
      totals.set(key, total);
    }
    return true;
  });
  // Keys are unique here, so no statement updates one total twice (PostgreSQL refuses that).
  await inSlices([...totals.values()], async (slice) => {
    const params = slice.flatMap((total) => [total.userId, total.window, total.period, total.tokens, total.costMicros, total.requests]);
    await query(manyRows(totalColumns, totalRow, slice.length, totalTail), params);
  });
  return recorded;
}

/** What an entry already recorded counts: its tokens and cost (micro-dollars, 0 without a price). */
export async function recordedUse(query: Query, entryId: string): Promise<{ tokens: number; costMicros: number }> {
  const [row] = await query(readEntry, [entryId]);
  return { tokens: numberOf(row?.tokens), costMicros: numberOf(row?.cost) };
}

/** Minute totals matter for a minute and day totals for a day; both are kept a while for reports of limits, then dropped. */
const KEEP_MINUTE_TOTALS_MS = 2 * 86_400_000;
const KEEP_DAY_TOTALS_MS = 400 * 86_400_000;

/** Drops per-period totals no quota can read again (month totals are few and stay). */
export async function purgeOldTotals(query: Query, now: number): Promise<void> {
  await query(`DELETE FROM "UsageTotal" WHERE "window" = 'minute' AND "periodStart" < ?`, [now - KEEP_MINUTE_TOTALS_MS]);
  await query(`DELETE FROM "UsageTotal" WHERE "window" = 'day' AND "periodStart" < ?`, [now - KEEP_DAY_TOTALS_MS]);
}

export function numberOf(value: unknown): number {
  return typeof value === 'bigint' ? Number(value) : Number(value ?? 0);
}

/** The user's settled totals in the periods holding `at`. */
export async function readWindowTotals(query: Query, userId: string, at: number): Promise<Map<QuotaWindow, WindowUse>> {
  const periods = periodsOf(at);
  const rows = await query(readTotals, [userId, periods.minute, periods.day, periods.month]);
  return new Map(rows.map((row: Row) => [row.window as QuotaWindow, { tokens: numberOf(row.tokens), costMicros: numberOf(row.costMicros), requests: numberOf(row.requests) }]));
}
