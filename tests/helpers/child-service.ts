import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

// The service as its own process (`node --import tsx src/main.ts`), for what only a real
// process shows: signals, kill -9, start-up output.

export interface ChildService {
  url: string;
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `nodeArgs` go before the entry point, after tsx (`--expose-gc`, a preloaded TypeScript probe). */
export async function spawnService(env: Record<string, string>, nodeArgs: string[] = []): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'src/main.ts'], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // a test that gives up must not leave the process behind
      reject(new Error(`service did not start in time; stderr: ${stderr}`));
    }, 20_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const parsed = JSON.parse(line) as { msg?: string; url?: string };
      if (parsed.msg === `listening on ${String(parsed.url)}` && parsed.url) {
        clearTimeout(timer);
        resolve(parsed.url);
      }
    });
    void exit.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  return { url, child, lines, exit };
}
