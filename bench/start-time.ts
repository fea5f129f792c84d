// `tsx bench/start-time.ts [folder …]` (issue 22, item 1): how long a second `npm start` takes to
// its first 200, as a user meets it. In each folder (default: this checkout; another build's
// folder measures that build), on a fresh SQLite database: one `npm start` to apply the migrations
// (not counted), then BENCH_ROUNDS (default 10) starts, each timed from the spawn of `npm start` to
// the first 200 of GET /api/status (polled every 5 ms), then stopped with SIGTERM and waited for.
// With several folders the rounds alternate between them, so a busy machine slows each alike.
// Prints each folder's median, p90 and rounds. Target: under 2 s.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const POLL_EVERY_MS = 5;
const START_TIMEOUT_MS = 120_000;

/** Nearest rank: of 10 rounds, p90 is the 9th fastest. */
function rank(sorted: number[], fraction: number): number {
  return sorted[Math.max(0, Math.ceil(sorted.length * fraction) - 1)] ?? Number.NaN;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** One `npm start` in `folder` until its first 200, then SIGTERM; the ms to the first 200. */
async function timedStart(folder: string, databaseUrl: string): Promise<number> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: folder,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'warn',
      npm_config_update_notifier: 'false',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = once(child, 'exit');
  const state = { gone: false };
  void exited.then(() => (state.gone = true));
  try {
    while (!(await answers200(`http://127.0.0.1:${port}/api/status`))) {
      if (state.gone || performance.now() - startedAt > START_TIMEOUT_MS) throw new Error(`npm start in ${folder} gave no 200:\n${errors}`);
      await new Promise((done) => setTimeout(done, POLL_EVERY_MS));
    }
    return performance.now() - startedAt;
  } finally {
    if (!state.gone) {
      child.kill('SIGTERM');
      await exited;
    }
  }
}

async function main(): Promise<void> {
  const folders = (process.argv.length > 2 ? process.argv.slice(2) : ['.']).map((folder) => resolve(folder));
  const data = folders.map(() => mkdtempSync(join(tmpdir(), 'assistant-start-')));
  const urls = data.map((folder) => `file:${join(folder, 'assistant.db')}`);
  const times: number[][] = folders.map(() => []);
  try {
    // The first start of each applies the migrations to its fresh database (and builds if needed).
    for (const [index, folder] of folders.entries()) await timedStart(folder, urls[index] as string);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, folder] of folders.entries()) times[index]?.push(await timedStart(folder, urls[index] as string));
    }
  } finally {
    for (const folder of data) rmSync(folder, { recursive: true, force: true });
  }
  console.log(`npm start to the first 200 of /api/status, ${ROUNDS} rounds, alternating\n`);
  console.log('| build | median | p90 | rounds (ms) |');
  console.log('|---|---|---|---|');
  for (const [index, folder] of folders.entries()) {
    const rounds = times[index] ?? [];
    const sorted = [...rounds].sort((a, b) => a - b);
    console.log(`| ${folder} | ${rank(sorted, 0.5).toFixed(0)} ms | ${rank(sorted, 0.9).toFixed(0)} ms | ${rounds.map((ms) => ms.toFixed(0)).join(', ')} |`);
  }
}

await main();
