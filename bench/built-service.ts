import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// The built service (`node dist/main.js`) on a fresh SQLite database, as the benchmarks run it.

export interface BuiltService {
  child: ChildProcess;
  url: string;
  /** SIGTERM, wait for the exit, remove the database folder. */
  stop(): Promise<void>;
}

/**
 * `nodeArgs` go before the script, such as `--cpu-prof` for a profile of the service; `build` is
 * the folder whose `dist/` runs (default: the current one), so two builds can be run side by side.
 */
export async function startBuiltService(env: Record<string, string> = {}, nodeArgs: string[] = [], build = '.'): Promise<BuiltService> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-'));
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    cwd: build,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', DATABASE_URL: `file:${join(folder, 'bench.db')}`, RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('service did not start within 20 s (run npm run build first)'));
      }, 20_000);
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = JSON.parse(line) as { msg?: string; url?: string };
        if (parsed.msg === `listening on ${String(parsed.url)}` && parsed.url) {
          clearTimeout(timer);
          resolve(parsed.url);
        }
      });
    });
    return { child, url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
