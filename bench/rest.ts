// `tsx bench/rest.ts`: the REST layer's overhead and the storage reads, on a database holding
// 10,000 conversations and about 200,000 messages of the `local` user (authentication off).
//  1. GET /api/status and GET /api/conversations at concurrency 50 against the service and,
//     in the same run, against bench/bare-express.ts doing the same queries: requests/s and ratio.
//  2. One client at a time: the list (first page, a deep page, a search) and the load of a
//     500-message conversation, 300 requests each: p50 and p99.
// SQLite by default; BENCH_DATABASE_URL=postgresql://… uses that (empty) database instead.
// Bounded in time; traffic stays on 127.0.0.1. Results go to BENCHMARKS.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startBuiltService } from './built-service.js';
import { get, load, percentile, type LoadResult } from './http-load.js';
import { seedConversations } from './seed-conversations.js';

const plan = { conversations: 10_000, perConversation: 20, longConversation: 500 };

async function startBareExpress(databaseUrl: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-express.ts', databaseUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', () => {
      reject(new Error('bare Express exited'));
    });
    createInterface({ input: child.stdout }).once('line', resolve);
  });
  return {
    url,
    stop: () => {
      child.kill();
    },
  };
}

/** `count` requests one after another: latency percentiles, and every status must be 200. */
async function sequential(url: string, count: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const started = performance.now();
    const status = await get(agent, url);
    latencies.push(performance.now() - started);
    if (status !== 200) throw new Error(`${url} answered ${status}`);
  }
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

const rate = (result: LoadResult) =>
  `${result.perSecond.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ${result.errors} errors`;

async function main(): Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-rest-bench-'));
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? `file:${join(folder, 'rest.db')}`;
  const service = await startBuiltService({ DATABASE_URL: databaseUrl });
  let bare: Awaited<ReturnType<typeof startBareExpress>> | undefined;
  try {
    const seedStarted = performance.now();
    const seeded = await seedConversations(databaseUrl, plan);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    bare = await startBareExpress(databaseUrl);

    const overhead: string[] = [];
    for (const path of ['/api/status', '/api/conversations']) {
      await load(`${service.url}${path}`, 10, 1);
      await load(`${bare.url}${path}`, 10, 1);
      const ours = await load(`${service.url}${path}`, 50, 5);
      const theirs = await load(`${bare.url}${path}`, 50, 5);
      overhead.push(
        `| GET ${path} | ${rate(ours)} | ${rate(theirs)} | ${(ours.perSecond / theirs.perSecond).toFixed(2)} |`,
      );
    }

    const storage: string[] = [];
    const reads: [string, string][] = [
      ['list, first page of 50', '/api/conversations'],
      ['list, page at offset 5000', '/api/conversations?offset=5000'],
      ['list, search `q=Conversation 99`', '/api/conversations?q=Conversation%2099'],
      [`load, a ${plan.longConversation}-message conversation`, `/api/conversation/${seeded.longId}`],
    ];
    for (const [label, path] of reads) {
      await sequential(`${service.url}${path}`, 20);
      const { p50, p99 } = await sequential(`${service.url}${path}`, 300);
      storage.push(`| ${label} | ${p50.toFixed(2)} ms | ${p99.toFixed(2)} ms |`);
    }

    const database = databaseUrl.startsWith('file:') ? 'SQLite' : 'PostgreSQL';
    console.log(`${database}: ${plan.conversations} conversations, ${seeded.messages} messages (seeded in ${seedSeconds.toFixed(1)} s)\n`);
    console.log(['| c=50, 5 s | service | bare Express, same queries | ratio |', '|---|---|---|---|', ...overhead].join('\n'));
    console.log();
    console.log(['| one client, 300 requests | p50 | p99 |', '|---|---|---|', ...storage].join('\n'));
  } finally {
    bare?.stop();
    await service.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
