// `tsx bench/rest-side-by-side.ts /tmp/before .`: GET /api/status at concurrency 50 on each named
// build (a folder holding a built `dist/`, such as HEAD unpacked with `git archive` and built, and
// the working tree) and on bench/bare-express.ts, in alternating rounds, so a busy machine weighs
// on every side alike. Prints each round, then per side the median requests/s, the ratio to bare
// Express (bench/rest.ts's figure) and the service's own CPU time per request (from /proc, which
// the load generator sharing the cores does not blur as much). SQLite, empty database: the status
// probe does not read the conversations. BENCH_ROUNDS (default 5), BENCH_SECONDS (default 3).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startBuiltService } from './built-service.js';
import { load, percentile } from './http-load.js';
import { cpuTimes } from './proc-stats.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const builds = process.argv.slice(2);

interface Side {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
  perSecond: number[];
  cpuPerRequest: number[];
}

async function startBare(databaseUrl: string): Promise<Side> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-express.ts', databaseUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const stop = () => {
    child.kill();
    return Promise.resolve();
  };
  return { name: 'bare Express', url, pid: child.pid ?? 0, stop, perSecond: [], cpuPerRequest: [] };
}

const cpuMs = (pid: number) => {
  const { user, system } = cpuTimes(pid);
  return user + system;
};

async function main(): Promise<void> {
  if (builds.length === 0) throw new Error('name at least one build folder, e.g. /tmp/before .');
  const folder = mkdtempSync(join(tmpdir(), 'assistant-side-by-side-'));
  const sides: Side[] = [];
  try {
    for (const [index, build] of builds.entries()) {
      // Each service migrates its own database; bare Express reads the first one.
      const service = await startBuiltService({ DATABASE_URL: `file:${join(folder, `${index}.db`)}` }, [], build);
      sides.push({ name: build, url: service.url, pid: service.child.pid ?? 0, stop: () => service.stop(), perSecond: [], cpuPerRequest: [] });
    }
    sides.push(await startBare(`file:${join(folder, '0.db')}`));
    for (const side of sides) await load(`${side.url}/api/status`, 10, 1);
    for (let round = 1; round <= rounds; round++) {
      const cells: string[] = [];
      for (const side of sides) {
        const before = cpuMs(side.pid);
        const result = await load(`${side.url}/api/status`, 50, seconds);
        const perRequestUs = ((cpuMs(side.pid) - before) * 1000) / result.requests;
        side.perSecond.push(result.perSecond);
        side.cpuPerRequest.push(perRequestUs);
        cells.push(`${side.name} ${result.perSecond.toFixed(0)} req/s, ${perRequestUs.toFixed(0)} µs CPU/req, p99 ${result.p99.toFixed(1)} ms`);
      }
      console.log(`round ${round}: ${cells.join(' | ')}`);
    }
    const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 0.5);
    const bare = median(sides.at(-1)?.perSecond ?? []);
    console.log('\n| GET /api/status, c=50 | median req/s | ratio to bare Express | CPU per request (median, min) |');
    console.log('|---|---|---|---|');
    for (const side of sides) {
      const perSecond = median(side.perSecond);
      console.log(
        `| ${side.name} | ${perSecond.toFixed(0)} | ${(perSecond / bare).toFixed(2)} | ${median(side.cpuPerRequest).toFixed(0)} µs, ${Math.min(...side.cpuPerRequest).toFixed(0)} µs |`,
      );
    }
  } finally {
    for (const side of sides) await side.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
