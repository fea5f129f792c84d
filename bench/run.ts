// `npm run bench`: start-up and REST latency of the built service on SQLite, printed as a table.
// Bounded in time; traffic stays on 127.0.0.1. Results are recorded in BENCHMARKS.md.
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { startBuiltService } from './built-service.js';

interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

function get(agent: Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** `concurrency` keep-alive clients request `url` back to back for `seconds`. */
async function load(url: string, concurrency: number, seconds: number): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const status = await get(agent, url).catch(() => 0);
      latencies.push(performance.now() - started);
      if (status !== 200) errors++;
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const elapsed = (performance.now() - began) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] ? Number(match[1]) / 1024 : Number.NaN;
}

async function main(): Promise<void> {
  const started = performance.now();
  const service = await startBuiltService();
  const { url, child } = service;
  try {
    const statusAgent = new Agent({ keepAlive: false });
    while ((await get(statusAgent, `${url}/api/status`).catch(() => 0)) !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const startupMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const idleRss = rssMb(child.pid ?? 0);

    for (let index = 0; index < 200; index++) {
      const body = JSON.stringify({
        conversationData: { messages: [{ role: 'user', content: `question ${index}` }, { role: 'assistant', content: `answer ${index}` }] },
      });
      await fetch(`${url}/api/conversation/save`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    }

    const rows: [string, LoadResult][] = [];
    for (const path of ['/api/status', '/api/conversations']) {
      await load(`${url}${path}`, 10, 1); // warm-up
      rows.push([`GET ${path} (c=50, 5 s)`, await load(`${url}${path}`, 50, 5)]);
    }

    const table = [
      '| measurement | result |',
      '|---|---|',
      `| start-up: spawn to first 200 on /api/status (fresh SQLite, migrations applied) | ${startupMs.toFixed(0)} ms |`,
      `| idle RSS after start | ${idleRss.toFixed(1)} MB |`,
      ...rows.map(
        ([label, r]) =>
          `| ${label} | ${r.perSecond.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.errors} errors of ${r.requests} |`,
      ),
    ];
    console.log(table.join('\n'));
  } finally {
    await service.stop();
  }
}

await main();
