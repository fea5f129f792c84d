import { spawn, type ChildProcess, type Serializable } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

// The chat benchmark's processes besides itself: the fake upstream, the bare hop, the built service,
// the Portkey gateway (each listening on 127.0.0.1 only) and the load generator.

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

/** A tsx script that prints `{"url": ...}` once listening; with an IPC channel when `ipc`. */
async function startListeningScript(script: string, what: string, env: Record<string, string>, ipc = false): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? (['ipc'] as const) : [])],
    env: { ...process.env, ...env },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`${what} exited with ${code}`));
    });
    createInterface({ input: child.stdout as Readable }).once('line', (line) => {
      resolve((JSON.parse(line) as { url: string }).url);
    });
  });
  return { child, url, stop: () => stopChild(child) };
}

/** Sends `message` on a child's IPC channel and resolves with its next message. */
export function ask<Reply>(child: ChildProcess, message: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => {
      reject(new Error(`the child exited with ${code} before answering`));
    };
    child.once('exit', onExit);
    child.once('message', (reply) => {
      child.off('exit', onExit);
      resolve(reply as Reply);
    });
    child.send(message as Serializable);
  });
}

/** `chunks`: how many text chunks each answer has (20 by default). With an IPC channel (`ask` it 'last-chat-request'). */
export function startFakeUpstream(chunks?: number): Promise<Started> {
  return startListeningScript('bench/chat-fake-upstream.ts', 'the fake upstream', chunks ? { FAKE_CHUNKS: String(chunks) } : {}, true);
}

/** The bare `node:http` hop to `upstreamOrigin` (bench/chat-bare-hop.ts). */
export function startBareHop(upstreamOrigin: string): Promise<Started> {
  return startListeningScript('bench/chat-bare-hop.ts', 'the bare hop', { UPSTREAM_ORIGIN: upstreamOrigin });
}

/** The load generator (bench/chat-load-worker.ts): `ask` it a LoadRequest, get a LoadReply. */
export async function startLoadWorker(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/chat-load-worker.ts'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return {
    child,
    url: '',
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    },
  };
}

/**
 * `node [nodeFlags] dist/main.js` on a fresh SQLite database. LOG_LEVEL=warn keeps request logging
 * out of the measurement, which also hides the "listening" line bench/built-service.ts waits for,
 * so the port is chosen here and /api/status polled. `nodeFlags` is how `--cpu-prof` gets in
 * (NODE_OPTIONS refuses it). `distDir`: another build (a copy of dist/ inside the repository, so
 * node_modules resolves), for an A/B in one run.
 */
export async function startService(env: Record<string, string>, nodeFlags: string[] = [], distDir = 'dist'): Promise<Started> {
  const folder = mkdtempSync(join(tmpdir(), 'assistant-bench-chat-'));
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, join(distDir, 'main.js')], {
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
