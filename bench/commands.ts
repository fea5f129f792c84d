// `npm run bench` (second part): the command path. Execute round trips through the built service
// (REST → risk analysis → audit → sandboxed PTY shell → reply) and the risk analysis alone, per
// command line. Prints a table; results are recorded in BENCHMARKS.md.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeCommand } from '../src/core/security/risk-analysis.js';
import { WorkspaceFiles } from '../src/core/workspaces/workspace-files.js';
import { loadConfig } from '../src/core/config/load-config.js';
import { detectSandbox } from '../src/core/sandbox/sandbox-state.js';
import { startBuiltService } from './built-service.js';
import { burstRows, statusDuringBurst } from './status-burst.js';

const EXECUTES = 300;
const ANALYSIS_ROUNDS = 2000;
const typicalLines = [
  'ls -la',
  'git status',
  'cat README.md',
  'grep -rn TODO src | head -20',
  'npm install && npm run build',
  'cd src && ls',
  'find . -name "*.ts" | wc -l',
  'git log --oneline -10',
  'rm -r build',
  'echo done > /tmp/out',
];

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown>;
}

async function executeRoundTrips(): Promise<{ sandbox: string; timings: Record<string, number[]> }> {
  const workspace = realpathSync(mkdtempSync(join('/var/tmp', 'assistant-bench-ws-')));
  const service = await startBuiltService({ ENABLE_SYSTEM_COMMANDS: 'true' });
  const { url } = service;
  try {
    const status = (await (await fetch(`${url}/api/status`)).json()) as { sandbox: string };
    await post(`${url}/api/workspaces/add`, { name: 'bench', path: workspace });
    const { terminalId } = (await post(`${url}/api/terminals`, {})) as { terminalId: string };
    const timings: Record<string, number[]> = {};
    for (const command of ['echo hi', 'pwd', 'git status']) {
      const samples: number[] = [];
      for (let index = 0; index < EXECUTES; index++) {
        const started = performance.now();
        const reply = await post(`${url}/api/terminals/${terminalId}/execute`, { command });
        samples.push(performance.now() - started);
        if (reply.success !== true || typeof reply.exitCode !== 'number') throw new Error(`execute failed: ${JSON.stringify(reply)}`);
      }
      timings[command] = samples.sort((a, b) => a - b);
    }
    return { sandbox: status.sandbox, timings };
  } finally {
    await service.stop();
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * The model's read_file tool on a 4 KB file, as the chat engine calls it: through the workspace's
 * confined file helper (started by the first call, as the first tool call of a service does).
 */
async function readFileTimings(): Promise<number[]> {
  const workspace = realpathSync(mkdtempSync(join('/var/tmp', 'assistant-bench-read-')));
  writeFileSync(join(workspace, 'README.md'), 'x'.repeat(4096));
  const files = new WorkspaceFiles(await detectSandbox(loadConfig({}, null)));
  try {
    const identity = { path: workspace, device: null, inode: null };
    await files.read(identity, 'README.md');
    const samples: number[] = [];
    for (let index = 0; index < EXECUTES; index++) {
      const started = performance.now();
      await files.read(identity, 'README.md');
      samples.push(performance.now() - started);
    }
    return samples.sort((a, b) => a - b);
  } finally {
    await files.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

function analysisTimings(): Map<string, number[]> {
  const workspace = realpathSync(mkdtempSync(join('/var/tmp', 'assistant-bench-risk-')));
  const context = { cwd: workspace, home: '/root', workspaceRoots: [workspace], restrictToWorkspaces: true };
  try {
    analyzeCommand('ls', context); // loads the parser once, as the first command of a service does
    const results = new Map<string, number[]>();
    for (const line of typicalLines) {
      const samples: number[] = [];
      for (let round = 0; round < ANALYSIS_ROUNDS; round++) {
        const started = performance.now();
        analyzeCommand(line, context);
        samples.push(performance.now() - started);
      }
      results.set(line, samples.sort((a, b) => a - b));
    }
    return results;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

const { sandbox, timings } = await executeRoundTrips();
const burst = await statusDuringBurst();
const readFile = await readFileTimings();
const analysis = analysisTimings();
const allAnalysis = [...analysis.values()].flat().sort((a, b) => a - b);
const rows = [
  '| measurement | median | p99 |',
  '|---|---|---|',
  ...Object.entries(timings).map(
    ([command, samples]) =>
      `| execute \`${command}\` round trip (REST, ${sandbox} sandbox, ${EXECUTES} runs) | ${percentile(samples, 0.5).toFixed(2)} ms | ${percentile(samples, 0.99).toFixed(2)} ms |`,
  ),
  `| model's read_file tool, 4 KB file (the workspace's confined helper, ${EXECUTES} runs) | ${percentile(readFile, 0.5).toFixed(2)} ms | ${percentile(readFile, 0.99).toFixed(2)} ms |`,
  ...[...analysis.entries()].map(
    ([line, samples]) =>
      `| risk analysis \`${line.replace(/\|/g, '\\|')}\` | ${(percentile(samples, 0.5) * 1000).toFixed(0)} µs | ${(percentile(samples, 0.99) * 1000).toFixed(0)} µs |`,
  ),
  `| risk analysis, all typical lines (${allAnalysis.length} runs) | ${(percentile(allAnalysis, 0.5) * 1000).toFixed(0)} µs | ${(percentile(allAnalysis, 0.99) * 1000).toFixed(0)} µs |`,
  ...burstRows(burst),
];
console.log(rows.join('\n'));
