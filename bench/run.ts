// `npm run bench`: start-up and REST latency of the built service on SQLite, printed as a table.
// Bounded in time; traffic stays on 127.0.0.1. Results are recorded in BENCHMARKS.md.
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { startBuiltService } from './built-service.js';
import { get, load, type LoadResult } from './http-load.js';

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
