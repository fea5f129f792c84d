import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Started } from './chat-processes.js';

/**
 * The slow streams' upstream (bench/streams-upstream.ts) in a process of its own, answering each
 * stream with `chunks` Chat Completions chunks 100–250 ms apart; for bench/streams.ts and
 * bench/stream-heap.ts.
 */
export async function startSlowUpstream(chunks: number): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/streams-upstream.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, STREAM_CHUNKS: String(chunks) },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the slow upstream exited with ${code}`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  };
  return { child, url, stop };
}
