// Issue 24, item 5: what WORKERS buys on this machine. The same built service on PostgreSQL +
// Redis, once as one process (WORKERS=1) and once as a primary with two workers (WORKERS=2),
// measured side by side in one run: the chat benchmark's 20-chunk exchange from the fake OpenAI
// upstream (bench/chat-exchange.ts), streamed at c=1 and c=50 and whole at c=50, rounds
// interleaved (the order reversed every other round) so the machine's drift hits both alike. At
// c=50 the clients either all write to the caller's current conversation, as bench/chat.ts does
// (on PostgreSQL its row is then a lock every exchange queues on), or each to a conversation of
// its own, as many users would. The fake and the load generator (bench/chat-workers-load.ts) are
// processes of their own; each service has a PostgreSQL database and a Redis key prefix of its
// own. CPU per exchange is every process of the route (the primary and its workers), read from
// /proc, with each worker's share (both must serve), the machine's PostgreSQL and Redis processes'
// CPU (other users' work included) and how busy both cores were. Every reply is checked whole and
// every exchange checked stored.
//
// `npm run build` first (or `--service=<folder>`: a folder holding dist/, with node_modules,
// prisma and package.json beside it). BENCH_ROUNDS (5), BENCH_WARM_UP_SECONDS (0.5),
// BENCH_SECONDS (2); BENCH_POSTGRES_URL (postgresql://postgres@127.0.0.1:5432/test, where the two
// databases are created and dropped), BENCH_REDIS_URL (redis://127.0.0.1:6379).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { exchange, serviceBody, type ChatTarget } from './chat-exchange.js';
import type { LoadReply } from './chat-load.js';
import { ask, startFakeUpstream, startService, type Started } from './chat-processes.js';
import type { Kind } from './chat-report.js';
import type { ConversationLoadRequest } from './chat-workers-load.js';
import { storedExchanges } from './chat-stored.js';
import { percentile } from './http-load.js';
import { cpuOfLiving, cpuTimes, pidsNamed } from './proc-stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 0.5);
const MEASURE_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** `own`: each client in a conversation of its own; `one`: all in the caller's current one, as bench/chat.ts. */
interface Cell {
  kind: Kind;
  concurrency: number;
  conversations: 'one' | 'own';
}
const CELLS: Cell[] = [
  { kind: 'sse', concurrency: 1, conversations: 'one' },
  { kind: 'sse', concurrency: 50, conversations: 'one' },
  { kind: 'sse', concurrency: 50, conversations: 'own' },
  { kind: 'json', concurrency: 50, conversations: 'own' },
];
const cellName = ({ kind, concurrency, conversations }: Cell) =>
  `${kind === 'sse' ? 'streamed' : 'whole'} c=${concurrency}${concurrency === 1 ? '' : conversations === 'one' ? ', one conversation' : ', a conversation each'}`;

interface Route {
  name: string;
  workers: number;
  started: Started;
  prefix: string;
  /** One per client of the `own` cells, made before the rounds. */
  conversationIds: string[];
  sent: number;
  failed: number;
}

interface Sample {
  round: number;
  exchanges: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  cpuMs: number;
  /** Each worker's CPU over the measured seconds (one entry for a single process). */
  workerCpuMs: number[];
  /** The primary's own CPU (0 for a single process). */
  primaryCpuMs: number;
  /** Share of the machine's CPU time (every core) busy over the measured seconds, any process. */
  machineBusy: number;
  /** CPU of every PostgreSQL, and of every Redis, process on the machine (other users' work included). */
  postgresCpuMs: number;
  redisCpuMs: number;
}


/** Busy and total jiffies of every core so far (/proc/stat), for the machine's busy share. */
function machineTimes(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** The route's processes: the primary and its workers, or the one process. */
function processesOf(route: Route): { all: number[]; workers: number[] } {
  const pid = route.started.child.pid ?? 0;
  if (route.workers === 1) return { all: [pid], workers: [pid] };
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return { all: [pid, ...children], workers: children };
}

const cpuOf = (pid: number) => {
  const { user, system } = cpuTimes(pid);
  return user + system;
};

function target(route: Route, kind: Kind): ChatTarget {
  return {
    url: `${route.started.url}/api/unified/${kind === 'sse' ? 'stream' : 'message'}`,
    headers: {},
    body: serviceBody(),
    reply: kind === 'sse' ? 'service-sse' : 'service-json',
  };
}

async function createDatabase(): Promise<string> {
  const name = `assistant_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(databaseUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
}

/**
 * Until every worker is up: each subscribes to its instance channel on Redis just before it
 * listens (app.ts), so N channels and a moment later N listening workers.
 */
async function waitForWorkers(channels: (pattern: string) => Promise<unknown[]>, route: Route): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await channels(`${route.prefix}instance:*`)).length < route.workers) {
    if (Date.now() > deadline) throw new Error(`${route.name}: not every worker started within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (processesOf(route).workers.length !== route.workers) throw new Error(`${route.name}: expected ${route.workers} worker processes`);
}

async function measure(loader: Started, route: Route, cell: Cell, round: number, samples: Map<string, Sample[]>): Promise<void> {
  const request = (seconds: number): ConversationLoadRequest => ({
    target: target(route, cell.kind),
    concurrency: cell.concurrency,
    seconds,
    conversationIds: cell.conversations === 'own' ? route.conversationIds : [],
  });
  const warmUp = await ask<LoadReply>(loader.child, request(WARM_UP_SECONDS));
  const { all, workers } = processesOf(route);
  const stores = { postgres: pidsNamed('postgres'), redis: pidsNamed('redis-server') };
  const before = {
    all: all.map(cpuOf),
    workers: workers.map(cpuOf),
    machine: machineTimes(),
    postgres: cpuOfLiving(stores.postgres),
    redis: cpuOfLiving(stores.redis),
  };
  const reply = await ask<LoadReply>(loader.child, request(MEASURE_SECONDS));
  const machine = machineTimes();
  const spent = (pids: number[], earlier: Map<number, number>) => [...cpuOfLiving(pids)].reduce((sum, [pid, ms]) => sum + ms - (earlier.get(pid) ?? ms), 0);
  const postgresCpuMs = spent(stores.postgres, before.postgres);
  const redisCpuMs = spent(stores.redis, before.redis);
  const cpuMs = all.reduce((sum, pid, index) => sum + cpuOf(pid) - (before.all[index] ?? 0), 0);
  const workerCpuMs = workers.map((pid, index) => cpuOf(pid) - (before.workers[index] ?? 0));
  route.sent += warmUp.firstEvents.length + reply.firstEvents.length;
  route.failed += warmUp.errors + reply.errors;
  const key = `${route.name} ${cellName(cell)}`;
  const list = samples.get(key) ?? [];
  samples.set(key, list);
  list.push({
    round,
    exchanges: reply.firstEvents.length,
    errors: reply.errors,
    perSecond: reply.firstEvents.length / reply.elapsed,
    p50: percentile(reply.firstEvents, 0.5),
    p99: percentile(reply.firstEvents, 0.99),
    cpuMs,
    workerCpuMs,
    primaryCpuMs: route.workers === 1 ? 0 : cpuMs - workerCpuMs.reduce((sum, ms) => sum + ms, 0),
    machineBusy: (machine.busy - before.machine.busy) / (machine.total - before.machine.total),
    postgresCpuMs,
    redisCpuMs,
  });
}

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 0.5);

function table(samples: Map<string, Sample[]>, routes: Route[]): string {
  const rows = CELLS.flatMap((cell) =>
    routes.map((route) => {
      const mine = samples.get(`${route.name} ${cellName(cell)}`) ?? [];
      const rates = mine.map((s) => s.perSecond);
      const exchanges = mine.reduce((sum, s) => sum + s.exchanges, 0);
      const workerTotals = mine.reduce<number[]>((totals, s) => s.workerCpuMs.map((ms, i) => ms + (totals[i] ?? 0)), []);
      const workerSum = workerTotals.reduce((sum, ms) => sum + ms, 0);
      return [
        route.name,
        cellName(cell),
        `${median(rates).toFixed(0)} (${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)})`,
        `${median(mine.map((s) => s.p50)).toFixed(2)} ms`,
        `${median(mine.map((s) => s.p99)).toFixed(2)} ms`,
        `${(mine.reduce((sum, s) => sum + s.cpuMs, 0) / exchanges).toFixed(3)} ms`,
        route.workers === 1 ? '—' : `${(mine.reduce((sum, s) => sum + s.primaryCpuMs, 0) / exchanges).toFixed(3)} ms`,
        route.workers === 1 ? '—' : workerTotals.map((ms) => `${((100 * ms) / workerSum).toFixed(0)}%`).join(' / '),
        `${(mine.reduce((sum, s) => sum + s.postgresCpuMs, 0) / exchanges).toFixed(3)} ms / ${(mine.reduce((sum, s) => sum + s.redisCpuMs, 0) / exchanges).toFixed(3)} ms`,
        `${(100 * median(mine.map((s) => s.machineBusy))).toFixed(0)}%`,
        `${mine.reduce((sum, s) => sum + s.errors, 0)} of ${exchanges}`,
      ];
    }),
  );
  return [
    '| service | kind | exchanges/s, median (range over rounds) | first event p50 | p99 | CPU per exchange (all its processes) | of which the primary | CPU split between workers | PostgreSQL / Redis CPU per exchange (all such processes) | machine busy (both cores, any process) | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((cols) => `| ${cols.join(' | ')} |`),
  ].join('\n');
}

/** Two workers against one, cell by cell, with the ratio of each round (the same round's drift). */
function ratioLines(samples: Map<string, Sample[]>, one: Route, two: Route): string[] {
  return CELLS.map((cell) => {
    const a = samples.get(`${one.name} ${cellName(cell)}`) ?? [];
    const b = samples.get(`${two.name} ${cellName(cell)}`) ?? [];
    const perRound = b.flatMap((sb) => {
      const sa = a.find((s) => s.round === sb.round);
      return sa === undefined ? [] : [sb.perSecond / sa.perSecond];
    });
    return `- ${cellName(cell)}: ${(median(b.map((s) => s.perSecond)) / median(a.map((s) => s.perSecond))).toFixed(2)}× the exchanges/s of one process (per round ${perRound.map((r) => r.toFixed(2)).join(', ')})`;
  });
}

/** A conversation for each client of the `own` cells (an import of one message). */
async function makeConversations(serviceUrl: string): Promise<string[]> {
  const concurrency = Math.max(...CELLS.map((cell) => cell.concurrency));
  const ids: string[] = [];
  for (let i = 0; i < concurrency; i++) {
    const response = await fetch(`${serviceUrl}/api/conversation/save`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ conversationData: { messages: [{ role: 'user', content: `Client ${i}` }] } }),
    });
    const body = (await response.json()) as { conversationId?: string };
    if (body.conversationId === undefined) throw new Error(`could not make a conversation: ${response.status} ${JSON.stringify(body)}`);
    ids.push(body.conversationId);
  }
  return ids;
}

/** bench/chat-workers-load.ts in a process of its own, driven over IPC. */
async function startLoader(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/chat-workers-load.ts'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await once(child, 'spawn');
  return {
    child,
    url: '',
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

/** Every exchange sent left its question and, when it succeeded, its whole answer. */
async function checkStored(route: Route): Promise<boolean> {
  const stored = await storedExchanges(route.started.url);
  const ok = stored.questions === route.sent && stored.answers === route.sent - route.failed;
  console.log(`Stored by ${route.name}: ${stored.answers} whole answers and ${stored.questions} questions of ${route.sent} exchanges sent (${route.failed} failed)${ok ? '' : ' — MISMATCH'}.`);
  return ok;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const folder = process.argv.find((arg) => arg.startsWith('--service='))?.slice('--service='.length) ?? '.';
  const redis = createClient({ url: REDIS_URL });
  await redis.connect();
  const fake = await startFakeUpstream();
  const started: Started[] = [fake];
  const routes: Route[] = [];
  /** What each service keeps outside itself, removed at the end. */
  const stores: { database: string; prefix: string }[] = [];
  try {
    for (const workers of [1, 2]) {
      const store = { database: await createDatabase(), prefix: `assistant-bench-workers-${randomBytes(4).toString('hex')}:` };
      stores.push(store);
      const { database, prefix } = store;
      const service = await startService(
        {
          OPENAI_BASE_URL: fake.url,
          OPENAI_API_KEY: 'sk-bench',
          AI_MODEL_PROVIDER: 'openai',
          AI_MODEL_NAME: 'gpt-4o-mini',
          MAX_STREAMS_PER_USER: '1000',
          // As bench/chat.ts: the caller's current conversation, a one-message window.
          MAX_CONVERSATION_HISTORY: '1',
          DATABASE_URL: database,
          REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          CLUSTER_SECRET: randomBytes(16).toString('hex'),
          WORKERS: String(workers),
        },
        [],
        join(folder, 'dist'),
      );
      started.push(service);
      const route: Route = { name: `WORKERS=${workers}`, workers, started: service, prefix, conversationIds: await makeConversations(service.url), sent: 0, failed: 0 };
      routes.push(route);
      await waitForWorkers((pattern) => redis.pubSubChannels(pattern), route);
    }
    const loader = await startLoader();
    started.push(loader);

    // One checked exchange per route and kind first: a wrong answer must fail loudly, not be timed.
    const checkAgent = new Agent({ keepAlive: false });
    for (const route of routes) {
      for (const kind of ['sse', 'json'] as const) {
        if (!(await exchange(checkAgent, target(route, kind))).ok) throw new Error(`${route.name} (${kind}): the answer did not arrive whole`);
        route.sent++;
      }
    }

    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const cell of CELLS) {
        const order = round % 2 === 0 ? routes : [...routes].reverse();
        for (const route of order) await measure(loader, route, cell, round, samples);
      }
      console.error(`round ${round + 1} of ${ROUNDS} done`);
    }

    await new Promise((resolve) => setTimeout(resolve, 500));
    console.log(`\n${ROUNDS} interleaved rounds of ${WARM_UP_SECONDS} s warm-up + ${MEASURE_SECONDS} s measured per service and cell; PostgreSQL + Redis; the built service in ${folder}.\n`);
    console.log(table(samples, routes));
    const [one, two] = routes as [Route, Route];
    console.log(`\n${ratioLines(samples, one, two).join('\n')}\n`);
    for (const route of routes) if (!(await checkStored(route))) process.exitCode = 1;
    // Both workers must have served: a worker that sat idle would make this a one-process figure.
    for (const [key, list] of samples) {
      for (const sample of list) {
        const total = sample.workerCpuMs.reduce((sum, ms) => sum + ms, 0);
        // At c=1 the one keep-alive connection stays with one worker, as it should.
        if (sample.workerCpuMs.length > 1 && !key.endsWith('c=1') && sample.workerCpuMs.some((ms) => ms < total * 0.1)) {
          console.log(`UNEVEN: ${key}, round ${sample.round + 1}: worker CPU ${sample.workerCpuMs.join(' / ')} ms`);
          process.exitCode = 1;
        }
      }
    }
    console.log(`\nLoad average (1 min) at start ${loadBefore.toFixed(2)}, at end ${(loadavg()[0] ?? Number.NaN).toFixed(2)}.`);
  } finally {
    await Promise.all(started.reverse().map((child) => child.stop()));
    for (const { database, prefix } of stores) {
      await dropDatabase(database).catch((error: unknown) => {
        console.error(`could not drop ${new URL(database).pathname}: ${String(error)}`);
      });
      for await (const keys of redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await redis.del(keys);
    }
    await redis.close();
  }
}

await main();
