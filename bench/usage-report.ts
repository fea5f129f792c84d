// GET /api/usage over a year of a 100-person team (CONTRACT §13: "indexed for a year"): the ledger
// is filled straight into a fresh database (100 users × 365 days × BENCH_CALLS_PER_DAY calls), then
// the report's queries are timed as the procedure runs them, on SQLite and on PostgreSQL.
// Run: npx tsx bench/usage-report.ts  (BENCH_CALLS_PER_DAY, default 20: 730,000 calls)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { migrate } from '../src/core/db/migrate.js';
import { postgresUsageSql, sqliteUsageSql } from '../src/core/usage/usage-sql-drivers.js';
import type { UsageSql } from '../src/core/usage/usage-sql.js';
import { usageReport, type UsageQuery } from '../src/core/usage/usage-report.js';

const USERS = 100;
const DAYS = 365;
const CALLS_PER_DAY = Number(process.env.BENCH_CALLS_PER_DAY ?? 20);
const ROUNDS = 15;
const postgresAdmin = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const models = ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5', 'ollama/llama3.2'];

async function fill(sql: UsageSql, end: number): Promise<void> {
  const batch = 2000;
  let rows: unknown[][] = [];
  const flush = async () => {
    if (rows.length === 0) return;
    const placeholders = rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
    await sql.query(
      `INSERT INTO "UsageEntry" (id, "userId", provider, model, "inputTokens", "outputTokens", estimated, "costMicros", outcome, "conversationId", "createdAt") VALUES ${placeholders}`,
      rows.flat(),
    );
    rows = [];
  };
  let serial = 0;
  for (let day = 0; day < DAYS; day++) {
    for (let user = 0; user < USERS; user++) {
      for (let call = 0; call < CALLS_PER_DAY; call++) {
        const [provider, model] = (models[(user + call) % models.length] ?? 'ollama/llama3.2').split('/');
        const at = end - (day * 86_400_000 + ((user * 7919 + call * 104_729) % 86_400_000));
        rows.push([`e${serial++}`, `user-${user}`, provider, model, 500 + call, 120, call % 17 === 0, provider === 'ollama' ? null : 400 + call, 'completed', null, new Date(at)]);
        if (rows.length === batch) await flush();
      }
    }
  }
  await flush();
}

async function timeQuery(sql: UsageSql, query: UsageQuery): Promise<{ p50: number; max: number; rows: number; held: number }> {
  const times: number[] = [];
  let rows = 0;
  // How long the event loop was held at a stretch while the report ran (what other requests wait).
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    rows = (await usageReport(sql, query)).rows.length;
    times.push(performance.now() - started);
  }
  lag.disable();
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length / 2)] ?? Number.NaN, max: times[times.length - 1] ?? Number.NaN, rows, held: lag.max / 1e6 };
}

async function measure(label: string, sql: UsageSql): Promise<void> {
  const end = Date.now();
  const filling = performance.now();
  await fill(sql, end);
  console.log(`${label}: ${USERS * DAYS * CALLS_PER_DAY} calls written in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
  const to = new Date(end + 1);
  const month = new Date(end - 30 * 86_400_000);
  const year = new Date(end - DAYS * 86_400_000);
  const cases: [string, UsageQuery][] = [
    ['own, this month, by day', { userId: 'user-42', from: month, to, groupBy: 'day' }],
    ['own, a year, by model', { userId: 'user-42', from: year, to, groupBy: 'model' }],
    ['own, a year, by day', { userId: 'user-42', from: year, to, groupBy: 'day' }],
    ['every user, this month (auditor)', { userId: null, from: month, to, groupBy: 'user' }],
    ['every user, a year (auditor)', { userId: null, from: year, to, groupBy: 'user' }],
  ];
  console.log(`\n| ${label} | rows | p50 | max | event loop held at most |\n|---|---|---|---|---|`);
  for (const [name, query] of cases) {
    const { p50, max, rows, held } = await timeQuery(sql, query);
    console.log(`| ${name} | ${rows} | ${p50.toFixed(1)} ms | ${max.toFixed(1)} ms | ${held.toFixed(1)} ms |`);
  }
  console.log('');
}

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-usage-'));
  const file = `file:${join(folder, 'usage.db')}`;
  try {
    await migrate(file);
    const sqlite = sqliteUsageSql(join(folder, 'usage.db'));
    await measure('SQLite', sqlite);
    await sqlite.close();
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  if (process.env.BENCH_SKIP_POSTGRES === '1') return;
  const name = `bench_usage_${Date.now()}`;
  const admin = new pg.Client({ connectionString: postgresAdmin });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = postgresAdmin.replace(/\/[^/]*$/, `/${name}`);
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    await migrate(url);
    await measure('PostgreSQL', postgresUsageSql(pool));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE ${name}`);
    await admin.end();
  }
}

await main();
