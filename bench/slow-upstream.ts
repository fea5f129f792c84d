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

/** The service's settings for slow streams from that upstream, all of them the one `local` user's. */
export function slowStreamServiceEnv(upstreamUrl: string, streams: number, databaseUrl: string, heapFile: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    OPENAI_BASE_URL: upstreamUrl,
    OPENAI_API_KEY: 'sk-bench',
    AI_MODEL_PROVIDER: 'openai',
    AI_MODEL_NAME: 'gpt-4o-mini',
    RATE_LIMIT_ENABLED: 'false',
    // The cap (10 by default) must fit them all.
    MAX_STREAMS_PER_USER: String(streams * 2),
    // The default, said out loud: it bounds the wait for the first byte and every silence after;
    // the upstream's longest silence is 250 ms.
    PROVIDER_TIMEOUT_MS: '60000',
    HEAP_PROBE_FILE: heapFile,
  };
}
