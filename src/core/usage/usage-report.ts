import { AppError } from '../errors/app-error.js';
import { numberOf } from './usage-ledger.js';
import type { UsageSql } from './usage-sql.js';

export const usageGroupings = ['day', 'model', 'provider', 'user'] as const;
export type UsageGrouping = (typeof usageGroupings)[number];

export interface UsageRow {
  /** `2026-11-27` (day), `openai/gpt-4o-mini` (model), `openai` (provider) or a user id. */
  key: string;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  requests: number;
  /** USD of the priced calls; null when none was priced. */
  costUsd: number | null;
  /** How many of the calls were estimated (the provider gave no count). */
  estimated: number;
}

export interface UsageQuery {
  /** null: every user (groupBy=user). */
  userId: string | null;
  from: Date;
  to: Date;
  groupBy: UsageGrouping;
}

/** One year and a bit: the longest span one request may sum. */
const MAX_SPAN_MS = 400 * 86_400_000;

function keyExpression(sql: UsageSql, groupBy: UsageGrouping): string {
  switch (groupBy) {
    case 'day':
      // SQLite keeps DateTime as ISO text (its first ten characters are the UTC day).
      return sql.kind === 'sqlite' ? `substr("createdAt", 1, 10)` : `to_char("createdAt", 'YYYY-MM-DD')`;
    case 'model':
      return `provider || '/' || model`;
    case 'provider':
      return 'provider';
    case 'user':
      return '"userId"';
  }
}

/**
 * On SQLite a statement holds the event loop while it runs, and every user's year is millions of
 * rows (835 ms measured): the range is summed in slices — a day of every user's calls, or a month
 * of one user's — with a turn of the loop between them. PostgreSQL runs it in one statement.
 */
function slicesOf(sql: UsageSql, query: UsageQuery): [Date, Date][] {
  if (sql.kind !== 'sqlite') return [[query.from, query.to]];
  const step = query.userId === null ? 86_400_000 : 31 * 86_400_000;
  const slices: [Date, Date][] = [];
  for (let start = query.from.getTime(); start < query.to.getTime(); start += step) {
    slices.push([new Date(start), new Date(Math.min(start + step, query.to.getTime()))]);
  }
  return slices;
}

function merged(into: Map<string, UsageRow>, row: UsageRow): void {
  const known = into.get(row.key);
  if (!known) {
    into.set(row.key, row);
    return;
  }
  known.inputTokens += row.inputTokens;
  known.outputTokens += row.outputTokens;
  known.totalTokens += row.totalTokens;
  known.requests += row.requests;
  known.estimated += row.estimated;
  if (row.costUsd !== null) known.costUsd = Math.round(((known.costUsd ?? 0) + row.costUsd) * 1_000_000) / 1_000_000;
}

/** The ledger summed per group over [from, to), on the (userId, createdAt) or (createdAt) index. */
export async function usageReport(sql: UsageSql, query: UsageQuery): Promise<{ rows: UsageRow[]; totals: Omit<UsageRow, 'key'> }> {
  if (query.to.getTime() <= query.from.getTime()) throw AppError.invalid('to must be after from', { field: 'to' });
  if (query.to.getTime() - query.from.getTime() > MAX_SPAN_MS) throw AppError.invalid('from and to may span at most 400 days', { field: 'from' });
  const key = keyExpression(sql, query.groupBy);
  const who = query.userId === null ? '' : `"userId" = ? AND `;
  const statement = `SELECT ${key} AS key, SUM("inputTokens") AS input, SUM("outputTokens") AS output, COUNT(*) AS requests,
       SUM("costMicros") AS cost, SUM(CASE WHEN estimated THEN 1 ELSE 0 END) AS estimated
     FROM "UsageEntry" WHERE ${who}"createdAt" >= ? AND "createdAt" < ? GROUP BY ${key}`;
  const groups = new Map<string, UsageRow>();
  const slices = slicesOf(sql, query);
  for (const [index, [from, to]] of slices.entries()) {
    if (index > 0) await new Promise((resolve) => setImmediate(resolve));
    const rows = await sql.query(statement, query.userId === null ? [from, to] : [query.userId, from, to]);
    for (const row of rows) {
      const inputTokens = numberOf(row.input);
      const outputTokens = numberOf(row.output);
      merged(groups, {
        key: String(row.key),
        inputTokens,
        outputTokens,
        totalTokens: inputTokens + outputTokens,
        requests: numberOf(row.requests),
        costUsd: row.cost === null || row.cost === undefined ? null : numberOf(row.cost) / 1_000_000,
        estimated: numberOf(row.estimated),
      });
    }
  }
  const shaped = [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const totals = shaped.reduce(
    (sum, row) => ({
      inputTokens: sum.inputTokens + row.inputTokens,
      outputTokens: sum.outputTokens + row.outputTokens,
      totalTokens: sum.totalTokens + row.totalTokens,
      requests: sum.requests + row.requests,
      costUsd: row.costUsd === null ? sum.costUsd : Math.round(((sum.costUsd ?? 0) + row.costUsd) * 1_000_000) / 1_000_000,
      estimated: sum.estimated + row.estimated,
    }),
    { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0, costUsd: null as number | null, estimated: 0 },
  );
  return { rows: shaped, totals };
}
