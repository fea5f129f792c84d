import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';

// The chat benchmark's three processes besides itself: the fake upstream, the built service and
// the Portkey gateway. Each listens on 127.0.0.1 only.

export interface Started {
  child: ChildProcess;
  /** The origin (service, gateway) or the OpenAI base URL (fake upstream, ends in /v1). */
  url: string;
  /** SIGTERM, wait for the exit, remove what it left behind. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

/** Polls `url` until it answers 200; fails early if the child exits. */
async function waitUntilServing(child: ChildProcess, url: string, what: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode} before serving`);
    const status = await fetch(url).then(
      async (res) => {
        await res.arrayBuffer();
        return res.status;
      },
      () => 0,
    );
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await stopChild(child);
  throw new Error(`${what} did not answer ${url} within 20 s`);
}

/** `chunks`: how many text chunks each answer has (20 by default). */
export async function startFakeUpstream(chunks?: number): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/chat-fake-upstream.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...(chunks ? { FAKE_CHUNKS: String(chunks) } : {}) },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`the fake upstream exited with ${code}`));
    });
    createInterface({ input: child.stdout }).once('line', (line) => {
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { child, url, stop: () => stopChild(child) };
}

/**
 * `node [nodeFlags] dist/main.js` on a fresh SQLite database. LOG_LEVEL=warn keeps request logging
 * out of the measurement, which also hides the "listening" line bench/built-service.ts waits for,
 * so the port is chosen here and /api/status polled. `nodeFlags` is how `--cpu-prof` gets in
 * (NODE_OPTIONS refuses it).
 */
export async function startService(env: Record<string, string>, nodeFlags: string[] = []): Promise<Started> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-chat-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, 'dist/main.js'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', DATABASE_URL: `file:${join(folder, 'bench.db')}`, RATE_LIMIT_ENABLED: 'false', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await stopChild(child);
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    await waitUntilServing(child, `${url}/api/status`, 'the service (run npm run build first)');
  } catch (error) {
    await stop();
    throw error;
  }
  return { child, url, stop };
}

// The gateway's start script (build/start-server.js) takes only `--port=` and `--headless` and
// calls @hono/node-server's serve() without a hostname, so it would listen on every interface.
// This preload gives a listen() that names no host 127.0.0.1 instead.
const loopbackPreload = `data:text/javascript,${encodeURIComponent(`
import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    if (args[1] === undefined) args[1] = '127.0.0.1'; else args.splice(1, 0, '127.0.0.1');
  }
  return listen.apply(this, args);
};
`)}`;

/** The Portkey AI gateway (`@portkey-ai/gateway`, its own start script) on 127.0.0.1 and a free port. */
export async function startPortkey(): Promise<Started & { version: string }> {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@portkey-ai/gateway/package.json');
  const { version } = require(manifest) as { version: string };
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', loopbackPreload, join(dirname(manifest), 'build/start-server.js'), `--port=${port}`, '--headless'], {
    // Its banner clears the terminal: nothing of stdout is wanted.
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(child, `${url}/`, 'the Portkey gateway');
  return { child, url, version, stop: () => stopChild(child) };
}
