// What the quota check (CONTRACT §13) adds to a streamed exchange's first token, side by side:
// the same built service three times, each in its own process against one fake upstream — with no
// policy, with a quota held in the database (SQLite), and with a quota held in Redis — measured at
// concurrency 1 in interleaved rounds so the machine's drift hits all three alike.
// Run: npm run build && npx tsx bench/quota-check.ts  (BENCH_ROUNDS, BENCH_EXCHANGES)
import { Agent } from 'node:http';
import { loadavg } from 'node:os';
import { randomUUID } from 'node:crypto';
import { exchange, serviceBody, type ChatTarget } from './chat-exchange.js';
import { startFakeUpstream, startService, type Started } from './chat-processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const EXCHANGES = Number(process.env.BENCH_EXCHANGES ?? 150);
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

// Generous limits of every kind, so every call is checked and reserved and none is refused.
const policy = {
  quotas: [
    { subject: { userId: 'local' }, window: 'minute', requests: 1_000_000, tokens: 1_000_000_000 },
    { subject: { userId: 'local' }, window: 'day', tokens: 1_000_000_000 },
    { subject: { userId: 'local' }, window: 'month', costUsd: 1_000_000 },
  ],
  modelAccess: [],
};

interface Setup {
  label: string;
  service: Started;
  firstTokens: number[];
  /** The setup this one differs from by the quota alone, and the most the quota may add (ms). */
  baseline?: string;
  target?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function storePolicy(url: string): Promise<void> {
  const reply = await fetch(`${url}/api/policies`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(policy) });
  if (reply.status !== 200) throw new Error(`PUT /api/policies: ${reply.status} ${await reply.text()}`);
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const fake = await startFakeUpstream();
  const common = {
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: 'sk-bench',
    AI_MODEL_PROVIDER: 'openai',
    AI_MODEL_NAME: 'gpt-4o-mini',
    MAX_CONVERSATION_HISTORY: '1',
    MODEL_PRICES: JSON.stringify({ 'openai/*': { input: 0.15, output: 0.6 } }),
  };
  const started: Started[] = [];
  try {
    const off = await startService(common);
    started.push(off);
    const inDatabase = await startService(common);
    started.push(inDatabase);
    // REDIS_URL also makes the service one of several instances (streams mirrored to Redis), so the
    // Redis quota is compared with the same setup without a quota.
    const redisEnv = () => ({ ...common, REDIS_URL: redisUrl, CLUSTER_SECRET: 'bench-quota-cluster-secret', REDIS_KEY_PREFIX: `bench-quota-${randomUUID()}:` });
    const redisOff = await startService(redisEnv());
    started.push(redisOff);
    const inRedis = await startService(redisEnv());
    started.push(inRedis);
    await storePolicy(inDatabase.url);
    await storePolicy(inRedis.url);
    const setups: Setup[] = [
      { label: 'no quota', service: off, firstTokens: [] },
      { label: 'quota, SQLite', service: inDatabase, firstTokens: [], baseline: 'no quota', target: 0.5 },
      { label: 'REDIS_URL, no quota', service: redisOff, firstTokens: [] },
      { label: 'quota, Redis', service: inRedis, firstTokens: [], baseline: 'REDIS_URL, no quota', target: 1 },
    ];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const targetOf = (setup: Setup): ChatTarget => ({
      url: `${setup.service.url}/api/unified/stream`,
      headers: { 'content-type': 'application/json' },
      body: serviceBody(),
      reply: 'service-sse',
    });
    // A warm-up round per setup, then the measured rounds, interleaved.
    for (const setup of setups) for (let index = 0; index < 30; index++) await exchange(agent, targetOf(setup));
    let failures = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of setups) {
        for (let index = 0; index < EXCHANGES; index++) {
          const result = await exchange(agent, targetOf(setup));
          if (result.ok) setup.firstTokens.push(result.firstEventMs);
          else failures++;
        }
      }
    }
    const p50Of = (setup: Setup | undefined) => percentile([...(setup?.firstTokens ?? [])].sort((a, b) => a - b), 50);
    console.log(`First streamed token at concurrency 1, ${ROUNDS} interleaved rounds of ${EXCHANGES} exchanges each\n`);
    console.log('| setup | first token p50 | p90 | added p50 by the quota | target |');
    console.log('|---|---|---|---|---|');
    for (const setup of setups) {
      const sorted = [...setup.firstTokens].sort((a, b) => a - b);
      const baseline = setups.find((other) => other.label === setup.baseline);
      const added = baseline === undefined ? undefined : p50Of(setup) - p50Of(baseline);
      const shownAdded = added === undefined ? '—' : `${added >= 0 ? '+' : '−'}${Math.abs(added).toFixed(3)} ms (vs ${baseline?.label ?? ''})`;
      const target = setup.target === undefined || added === undefined ? '' : `< ${setup.target} ms (${added < setup.target ? 'met' : 'NOT met'})`;
      console.log(`| ${setup.label} | ${p50Of(setup).toFixed(2)} ms | ${percentile(sorted, 90).toFixed(2)} ms | ${shownAdded} | ${target} |`);
    }
    if (failures > 0) {
      console.log(`\n${failures} exchanges failed`);
      process.exitCode = 1;
    }
    console.log(`\nLoad average (1 min) at start ${loadBefore.toFixed(2)}, at end ${(loadavg()[0] ?? Number.NaN).toFixed(2)}.`);
    agent.destroy();
  } finally {
    await Promise.all([...started.map((service) => service.stop()), fake.stop()]);
  }
}

await main();
