// `tsx bench/hostile-load.ts` (issue 20): does any request stall the service for everyone? The
// built service (`npm run build` first; run from another build's folder to measure that build), on
// SQLite and then PostgreSQL, with 10,000 conversations and ~200,000 messages of the `local` user
// seeded straight into the database. /api/status is polled every 20 ms, first for a few seconds
// with nothing else going on, then while bench/hostile-mix.ts's clients run: the largest import,
// searches, maximum-size bodies and huge offsets. Prints /api/status p50/p99/max (target p99
// < 100 ms), the event-loop lag p99 from /metrics (assistant_event_loop_lag_seconds, to within
// its bucket) and what each hostile client got done. Results go to BENCHMARKS.md.
//
// BENCH_SECONDS (default 20) sets the hostile phase; BENCH_DATABASES=sqlite or =postgresql runs
// one; BENCH_CLIENTS=importer,searcher,bodies,pager runs only those (to see which holds the
// loop); BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/test) is where a fresh
// database is made for the run and dropped after it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startBuiltService } from './built-service.js';
import { lagPercentile, runHostileMix, scrapeLoopLag, type ClientName, type HostileMixResult } from './hostile-mix.js';
import { percentile } from './http-load.js';
import { seedConversations } from './seed-conversations.js';

const plan = { conversations: 10_000, perConversation: 20, longConversation: 500 };
const HOSTILE_SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const IDLE_SECONDS = 3;
const IMPORT_MESSAGES = 10_000;
const BODY_LIMIT = 1024 * 1024;
const MAX_MESSAGE_LENGTH = 100_000;
const postgresAdminUrl = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

interface Database {
  name: 'SQLite' | 'PostgreSQL';
  url: string;
  drop(): Promise<void>;
}

function sqliteDatabase(): Database {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-hostile-'));
  return {
    name: 'SQLite',
    url: `file:${join(folder, 'hostile.db')}`,
    drop: () => {
      rmSync(folder, { recursive: true, force: true });
      return Promise.resolve();
    },
  };
}

async function postgresDatabase(): Promise<Database> {
  const name = `assistant_hostile_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresAdminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return { name: 'PostgreSQL', url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

interface Row {
  database: string;
  messages: number;
  idle: number[];
  mix: HostileMixResult;
  lagP99: number | null;
  lagIdleP99: number | null;
}

async function pollStatus(url: string, seconds: number): Promise<number[]> {
  const samples: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const started = performance.now();
    await (await fetch(`${url}/api/status`)).arrayBuffer();
    samples.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return samples.sort((a, b) => a - b);
}

async function measure(database: Database): Promise<Row> {
  // BENCH_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the service under the mix.
  const service = await startBuiltService({ DATABASE_URL: database.url }, (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
  try {
    const seeded = await seedConversations(database.url, plan);
    const atStart = await scrapeLoopLag(service.url);
    const idle = await pollStatus(service.url, IDLE_SECONDS);
    const beforeMix = await scrapeLoopLag(service.url);
    const mix = await runHostileMix({
      url: service.url,
      seconds: HOSTILE_SECONDS,
      importMessages: IMPORT_MESSAGES,
      bodyLimit: BODY_LIMIT,
      maxMessageLength: MAX_MESSAGE_LENGTH,
      ...(process.env.BENCH_CLIENTS ? { only: process.env.BENCH_CLIENTS.split(',') as ClientName[] } : {}),
    });
    const afterMix = await scrapeLoopLag(service.url);
    return {
      database: database.name,
      messages: seeded.messages,
      idle,
      mix,
      lagIdleP99: atStart && beforeMix ? lagPercentile(atStart, beforeMix, 0.99) : null,
      lagP99: beforeMix && afterMix ? lagPercentile(beforeMix, afterMix, 0.99) : null,
    };
  } finally {
    await service.stop();
    await database.drop();
  }
}

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a');
const lag = (value: number | null) => (value === null ? 'n/a (no histogram)' : `≤ ${value} ms`);

function clientCell(mix: HostileMixResult, name: ClientName): string {
  const { ms: durations, replies } = mix.clients[name];
  const statuses = Object.entries(replies)
    .map(([status, count]) => `${count}×${status}`)
    .join(' ');
  return `${durations.length} (${statuses}), p50 ${ms(percentile(durations, 0.5))}, max ${ms(durations.at(-1) ?? Number.NaN)}`;
}

function print(rows: Row[]): void {
  const clients = process.env.BENCH_CLIENTS ?? 'all clients';
  console.log(`/api/status every 20 ms; hostile phase ${HOSTILE_SECONDS} s (${clients}); imports of ${IMPORT_MESSAGES} messages; bodies of ${BODY_LIMIT} bytes\n`);
  console.log('| database | phase | /api/status polls | p50 | p99 | max | event-loop lag p99 |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) {
    const { idle, mix } = row;
    console.log(`| ${row.database} (${row.messages} messages) | idle | ${idle.length} | ${ms(percentile(idle, 0.5))} | ${ms(percentile(idle, 0.99))} | ${ms(idle.at(-1) ?? Number.NaN)} | ${lag(row.lagIdleP99)} |`);
    const failures = mix.statusFailures > 0 ? ` (${mix.statusFailures} failed)` : '';
    console.log(
      `| ${row.database} | hostile | ${mix.status.length}${failures} | ${ms(percentile(mix.status, 0.5))} | ${ms(percentile(mix.status, 0.99))} | ${ms(mix.status.at(-1) ?? Number.NaN)} | ${lag(row.lagP99)} |`,
    );
  }
  console.log('\n| database | imports | searches | maximum-size bodies | huge offsets |');
  console.log('|---|---|---|---|---|');
  for (const { database, mix } of rows) {
    console.log(`| ${database} | ${clientCell(mix, 'importer')} | ${clientCell(mix, 'searcher')} | ${clientCell(mix, 'bodies')} | ${clientCell(mix, 'pager')} |`);
  }
}

async function main(): Promise<void> {
  const chosen = process.env.BENCH_DATABASES ?? 'sqlite,postgresql';
  const rows: Row[] = [];
  if (chosen.includes('sqlite')) rows.push(await measure(sqliteDatabase()));
  if (chosen.includes('postgresql')) rows.push(await measure(await postgresDatabase()));
  print(rows);
}

await main();
