// `npm run build && npx tsx bench/postgres-exchange-statements.ts` (issue 24): what each of an
// exchange's statements costs PostgreSQL itself, read from /proc for the one backend that runs
// them (its own CPU, not the time it waited), so a change to the SQL shows apart from the
// machine's drift. The chat store and the usage ledger of a build (its dist/) write, as the
// service does per exchange: the setup read, the question (with its history window), the answer
// stored whole, and one ledger settle per 8 calls, sequentially on one connection (a new one each
// round) into one conversation that grows the whole run.
//
// `--service-a=<folder>` and `--service-b=<folder>` (each a folder holding dist/, default the
// repository) are measured side by side: rounds alternate between them, each on a database of
// its own (dropped at the end). Options: BENCH_ROUNDS (6), BENCH_EXCHANGES (500 per round),
// BENCH_POSTGRES_URL (postgresql://postgres@127.0.0.1:5432/postgres, where the databases are made).
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { cpuTimes } from './proc-stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const EXCHANGES = Number(process.env.BENCH_EXCHANGES ?? 500);
const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const LEDGER_BATCH = 8;
const STEPS = ['setup read', 'question', 'answer', `ledger (per exchange, ${LEDGER_BATCH} a settle)`] as const;
type Step = (typeof STEPS)[number];

interface Build {
  label: string;
  database: string;
  run: (exchanges: number) => Promise<Record<Step, number>>;
  messages: () => Promise<number>;
  close: () => Promise<void>;
}

/** CPU (user + system) of one process so far, in ms. */
function cpuMs(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

// The build's own modules, loaded from its dist/ (the A/B compares their SQL).
interface ChatStoreModule {
  PostgresChatStore: new (pool: pg.Pool, writer: string) => {
    readSetup(query: { userId: string; conversationId: string | null; promptOrderId: string | null }): Promise<unknown>;
    recordQuestion(question: { userId: string; conversationId: string | null; content: string; defaultTitle: string; historyLimit: number }): Promise<{ conversation: { id: string } } | null>;
    closeAnswer(messageId: string | null, conversationId: string, userId: string, answer: unknown, target: unknown): Promise<unknown>;
  };
}
interface LedgerModule {
  recordCalls: (query: unknown, calls: { usage: unknown }[]) => Promise<boolean[]>;
}
interface UsageSqlModule {
  postgresUsageSql: (pool: pg.Pool) => { lockedMany<T>(userIds: string[], work: (query: unknown) => Promise<T>): Promise<T> };
}
interface MigrateModule {
  migrate: (url: string) => Promise<void>;
}

const answer = {
  content: Array.from({ length: 20 }, (_, index) => `token${String(index).padStart(2, '0')} `).join(''),
  toolCalls: [],
  finishReason: 'stop',
  usage: { inputTokens: 20, outputTokens: 20 },
};

async function openBuild(label: string, folder: string, database: string): Promise<Build> {
  const dist = resolve(folder, 'dist');
  const load = <T>(path: string) => import(pathToFileURL(join(dist, path)).href) as Promise<T>;
  const [{ PostgresChatStore }, { recordCalls }, { postgresUsageSql }, { migrate }] = await Promise.all([
    load<ChatStoreModule>('core/chat-store/postgres-chat-store.js'),
    load<LedgerModule>('core/usage/usage-ledger.js'),
    load<UsageSqlModule>('core/usage/usage-sql-drivers.js'),
    load<MigrateModule>('core/db/migrate.js'),
  ]);
  await admin(`DROP DATABASE IF EXISTS ${database}`);
  await admin(`CREATE DATABASE ${database}`);
  await migrate(databaseUrl(database));
  // Each round on a new connection, whose backend's CPU is read: the service's pool closes idle
  // connections and opens new ones, and a new connection plans its prepared statements afresh
  // against the tables as they are then (the history read's plan went wrong that way).
  let pool = new pg.Pool({ connectionString: databaseUrl(database), max: 1 });
  let conversationId: string | null = null;
  const run = async (exchanges: number) => {
    await pool.end();
    pool = new pg.Pool({ connectionString: databaseUrl(database), max: 1 });
    const backendPid = Number((await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    const store = new PostgresChatStore(pool, 'bench');
    const sql = postgresUsageSql(pool);
    const spent = Object.fromEntries(STEPS.map((step) => [step, 0])) as Record<Step, number>;
    const timed = async (step: Step, work: () => Promise<unknown>) => {
      const before = cpuMs(backendPid);
      await work();
      spent[step] += cpuMs(backendPid) - before;
    };
    const calls: { usage: unknown }[] = [];
    for (let i = 0; i < exchanges; i++) {
      await timed('setup read', () => store.readSetup({ userId: 'bench', conversationId: null, promptOrderId: null }));
      await timed('question', async () => {
        const recorded = await store.recordQuestion({ userId: 'bench', conversationId, content: 'Say twenty tokens.', defaultTitle: 'Say twenty', historyLimit: 1 });
        conversationId = recorded?.conversation.id ?? null;
      });
      const id = conversationId ?? '';
      await timed('answer', () => store.closeAnswer(null, id, 'bench', answer, { provider: 'openai', model: 'gpt-4o-mini' }));
      calls.push({
        usage: { userId: 'bench', provider: 'openai', model: 'gpt-4o-mini', inputTokens: 20, outputTokens: 20, estimated: false, costMicros: 3, outcome: 'completed', conversationId: id, startedAt: Date.now() },
      });
      if (calls.length === LEDGER_BATCH) await timed(STEPS[3], () => sql.lockedMany(['bench'], (query) => recordCalls(query, calls.splice(0))));
    }
    return spent;
  };
  const messages = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM "Message"')).rows[0]?.n);
  return { label, database, run, messages, close: () => pool.end() };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

async function main(): Promise<void> {
  const folderOf = (name: string) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  const a = folderOf('service-a') ?? '.';
  const b = folderOf('service-b');
  const builds = [await openBuild(`A (${a})`, a, 'bench_statements_a')];
  if (b !== undefined) builds.push(await openBuild(`B (${b})`, b, 'bench_statements_b'));
  // figures[build][step] = µs per exchange, one per round
  const figures = builds.map(() => new Map<Step, number[]>(STEPS.map((step) => [step, []])));
  const lengths: number[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so neither always runs on the warmer machine.
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const build of order) {
        const spent = await build.run(EXCHANGES);
        for (const step of STEPS) figures[builds.indexOf(build)]?.get(step)?.push((spent[step] * 1000) / EXCHANGES);
      }
      lengths.push(await builds[0]?.messages() ?? Number.NaN);
    }
    console.log(`PostgreSQL's own CPU per exchange (its backend, /proc), ${ROUNDS} rounds of ${EXCHANGES} exchanges into one conversation (${lengths[0]} → ${lengths.at(-1)} messages); median over rounds (first round → last round):\n`);
    console.log(`| statement | ${builds.map((build) => build.label).join(' | ')} |`);
    console.log(`|---|${builds.map(() => '---|').join('')}`);
    const cell = (values: number[]) => `${median(values).toFixed(0)} µs (${values[0]?.toFixed(0)} → ${values.at(-1)?.toFixed(0)})`;
    for (const step of STEPS) console.log(`| ${step} | ${figures.map((byStep) => cell(byStep.get(step) ?? [])).join(' | ')} |`);
    const totals = figures.map((byStep) => STEPS.map((step) => byStep.get(step) ?? []).reduce((sum, values) => sum.map((value, index) => value + (values[index] ?? 0)), Array<number>(ROUNDS).fill(0)));
    console.log(`| **all** | ${totals.map((values) => `**${cell(values)}**`).join(' | ')} |`);
    console.log('\n(The clock ticks in 10 ms steps: a figure is good to about 10 ms / exchanges per round.)');
  } finally {
    for (const build of builds) {
      await build.close();
      await admin(`DROP DATABASE IF EXISTS ${build.database}`);
    }
  }
}

await main();
