// CONTRACT §11 "Bounded analysis": does judging the longest lines stall the service? Used by
// bench/commands.ts; run on its own (`npx tsx bench/status-burst.ts`) it prints the rows for the
// build in the current folder's dist/, so two builds can be measured side by side by running it
// from each one's folder.
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startBuiltService } from './built-service.js';

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

/** A line of MAX_COMMAND_LENGTH (16384) characters that is slow to judge: thousands of words, each a possible path. */
const MAX_LENGTH_LINE = `echo${' word'.repeat(3300)}`.slice(0, 16384);
export const BURST_TERMINALS = 4;
const BURST_LINES_PER_TERMINAL = 5;

/**
 * CONTRACT §11 "Bounded analysis": /api/status latency polled every 20 ms, first with nothing else
 * going on, then while BURST_TERMINALS terminals each send maximum-length lines one after another
 * (judged on the analysis thread, one at a time). Same service, same polling, side by side.
 */
export async function statusDuringBurst(): Promise<{ idle: number[]; burst: number[]; judged: number; judgeMs: number[] }> {
  const workspace = realpathSync(mkdtempSync(join('/var/tmp', 'assistant-bench-burst-')));
  const service = await startBuiltService({ ENABLE_SYSTEM_COMMANDS: 'true', COMMAND_TIMEOUT_MS: '60000' });
  const { url } = service;
  const poll = async (until: () => boolean): Promise<number[]> => {
    const samples: number[] = [];
    while (!until()) {
      const started = performance.now();
      await (await fetch(`${url}/api/status`)).arrayBuffer();
      samples.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return samples.sort((a, b) => a - b);
  };
  try {
    await post(`${url}/api/workspaces/add`, { name: 'bench', path: workspace });
    const terminals: string[] = [];
    for (let index = 0; index < BURST_TERMINALS; index++) terminals.push(((await post(`${url}/api/terminals`, {})) as { terminalId: string }).terminalId);
    const idleEnd = performance.now() + 3000;
    const idle = await poll(() => performance.now() > idleEnd);
    let done = false;
    const judgeMs: number[] = [];
    const senders = Promise.all(terminals.map(async (terminalId) => {
      for (let index = 0; index < BURST_LINES_PER_TERMINAL; index++) {
        const started = performance.now();
        const reply = await post(`${url}/api/terminals/${terminalId}/execute`, { command: MAX_LENGTH_LINE });
        judgeMs.push(performance.now() - started);
        if (reply.success !== true) throw new Error(`burst execute failed: ${JSON.stringify(reply).slice(0, 300)}`);
      }
    })).finally(() => {
      done = true;
    });
    const burst = await poll(() => done);
    await senders;
    return { idle, burst, judged: BURST_TERMINALS * BURST_LINES_PER_TERMINAL, judgeMs: judgeMs.sort((a, b) => a - b) };
  } finally {
    await service.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}


/** The table rows for one run. */
export function burstRows(burst: Awaited<ReturnType<typeof statusDuringBurst>>): string[] {
  return [
    `| \`/api/status\`, idle (${burst.idle.length} polls) | ${percentile(burst.idle, 0.5).toFixed(2)} ms | ${percentile(burst.idle, 0.99).toFixed(2)} ms |`,
    `| \`/api/status\` while ${burst.judged} maximum-length lines are judged (${BURST_TERMINALS} terminals, ${burst.burst.length} polls) | ${percentile(burst.burst, 0.5).toFixed(2)} ms | ${percentile(burst.burst, 0.99).toFixed(2)} ms |`,
    `| execute of one maximum-length line, queued behind the others | ${percentile(burst.judgeMs, 0.5).toFixed(0)} ms | ${percentile(burst.judgeMs, 0.99).toFixed(0)} ms |`,
  ];
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  console.log(['| measurement | median | p99 |', '|---|---|---|', ...burstRows(await statusDuringBurst())].join('\n'));
}
