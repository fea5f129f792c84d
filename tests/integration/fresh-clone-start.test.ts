import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A new user's first steps (issue 22): clone, install (which builds), `npm start` to a 200,
// `npm start` again without a build, SIGTERM to `npm start` ending every process it started, and
// a production install (no devDependencies) that still starts and migrates.
//
// The clone is of HEAD with the working tree's uncommitted changes laid over it (none in CI), so
// the test checks what the next commit would hold. node_modules is the working tree's, hard-linked
// (`cp -al`): a real `npm ci` would spend minutes fetching what is already here and building the
// native modules, while the package's own install steps (generating the Prisma clients, building
// dist/) run for real, through `npm install` on a tree that is already complete.

const run = promisify(execFile);
const repo = new URL('../..', import.meta.url).pathname;

interface Started {
  child: ChildProcess;
  output: () => string;
  /** From spawning `npm start` to the first 200 of /api/status, in ms. */
  msToFirst200: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

async function answers(url: string): Promise<number | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return undefined;
  }
}

/** Every process below `pid` now (children, grandchildren …), read from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // ended while listing
    }
    // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return undefined;
  }
}

async function npmStart(cwd: string, env: Record<string, string>, port: number): Promise<Started> {
  const startedAt = performance.now();
  const child = spawn('npm', ['start'], {
    cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const state = { exited: false };
  void exit.then(() => (state.exited = true));
  // A first start may build (minutes on a busy two-core machine); later ones must not.
  const deadline = Date.now() + 300_000;
  while ((await answers(`http://127.0.0.1:${port}/api/status`)) !== 200) {
    if (state.exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`npm start did not answer 200 (exited: ${state.exited}); output:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { child, output: () => output, msToFirst200: Math.round(performance.now() - startedAt), exit };
}

/** SIGTERM to the `npm start` process alone, as a process manager sends it; returns how it ended. */
async function stopWithSigterm(started: Started, port: number) {
  const npmPid = started.child.pid as number;
  const below = descendants(npmPid);
  // npm → the launcher (scripts/service.mjs start) → node dist/main.js.
  expect(below.map(commandLine).some((line) => line?.includes('dist/main.js'))).toBe(true);
  process.kill(npmPid, 'SIGTERM');
  const ended = await started.exit;
  // What it started is gone with it: nothing left serving, no process of its tree alive.
  const survivors = below.filter((pid) => {
    const line = commandLine(pid);
    return line !== undefined && /node|npm|sh/.test(line);
  });
  expect(survivors.map(commandLine)).toEqual([]);
  expect(await answers(`http://127.0.0.1:${port}/api/status`)).toBeUndefined();
  return ended;
}

/** `git clone` of HEAD, with the working tree's uncommitted changes and new files copied over. */
async function cloneWorkingTree(target: string) {
  await run('git', ['clone', '--quiet', '--no-hardlinks', repo, target], { timeout: 120_000 });
  const { stdout: changed } = await run('git', ['ls-files', '--modified', '--others', '--exclude-standard', '-z'], { cwd: repo, maxBuffer: 16 * 1024 * 1024 });
  for (const file of changed.split('\0').filter(Boolean)) {
    const from = join(repo, file);
    if (!existsSync(from) || !statSync(from).isFile()) continue;
    mkdirSync(dirname(join(target, file)), { recursive: true });
    copyFileSync(from, join(target, file));
  }
  const { stdout: deleted } = await run('git', ['ls-files', '--deleted', '-z'], { cwd: repo });
  for (const file of deleted.split('\0').filter(Boolean)) rmSync(join(target, file), { force: true });
}

describe('a fresh clone: install, start, restart, stop, production install', () => {
  let root: string;
  let clone: string;
  const env: Record<string, string> = {};
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'fresh-clone-'));
    clone = join(root, 'clone');
    await cloneWorkingTree(clone);
    // Hard links where the temporary folder shares the file system, a copy where it does not.
    await run('cp', ['-al', join(repo, 'node_modules'), join(clone, 'node_modules')]).catch(async () => {
      rmSync(join(clone, 'node_modules'), { recursive: true, force: true });
      await run('cp', ['-a', join(repo, 'node_modules'), join(clone, 'node_modules')]);
    });
    // npm rewrites its own record of the tree: a copy of its own, never a link to the original's.
    const record = join(clone, 'node_modules', '.package-lock.json');
    if (existsSync(record)) {
      rmSync(record);
      copyFileSync(join(repo, 'node_modules', '.package-lock.json'), record);
    }
    Object.assign(env, {
      DATABASE_URL: `file:${join(root, 'data', 'assistant.db')}`,
      LOG_LEVEL: 'info',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    });
    const installStart = performance.now();
    // `npm install` on a complete tree runs only the package's own steps: postinstall (Prisma
    // clients) and prepare (the build), as `npm ci` would.
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund'], {
      cwd: clone,
      env: { ...process.env, ...env },
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    timings['install (builds)'] = Math.round(performance.now() - installStart);
  }, 900_000);

  afterAll(() => {
    console.log('fresh clone timings (ms):', timings);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the install built dist/ and recorded the build', () => {
    expect(existsSync(join(clone, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(clone, 'dist', 'web', 'index.html'))).toBe(true);
    expect(existsSync(join(clone, 'dist', '.build-stamp'))).toBe(true);
  });

  it('npm start answers 200 without building again, restarts without a build, and SIGTERM leaves nothing behind', async () => {
    const port = await freePort();
    const first = await npmStart(clone, env, port);
    timings['first npm start to 200'] = first.msToFirst200;
    expect(first.output()).not.toMatch(/rebuilding|building dist/);
    expect(await stopWithSigterm(first, port)).toEqual({ code: 0, signal: null });
    // The graceful stop ran in the service (not a kill from outside).
    expect(first.output()).toContain('"msg":"stopped"');

    const second = await npmStart(clone, env, port);
    timings['second npm start to 200'] = second.msToFirst200;
    expect(second.output()).not.toMatch(/rebuilding|building dist/);
    expect(await stopWithSigterm(second, port)).toEqual({ code: 0, signal: null });
    // The target is 2 s; on a busy two-core machine npm alone can take a second, so the
    // bound here is loose and the figure is printed for the record.
    expect(second.msToFirst200).toBeLessThan(15_000);
  }, 600_000);

  it('a changed source is rebuilt by npm start', async () => {
    const source = join(clone, 'src', 'main.ts');
    const later = new Date(Date.now() + 2000);
    utimesSync(source, later, later);
    const port = await freePort();
    const started = await npmStart(clone, env, port);
    timings['npm start with a rebuild to 200'] = started.msToFirst200;
    expect(started.output()).toContain('sources changed since the last build; rebuilding dist/');
    expect(await stopWithSigterm(started, port)).toEqual({ code: 0, signal: null });
  }, 600_000);

  it('without devDependencies, prepare succeeds, npm run migrate migrates and npm start starts the existing build', async () => {
    // What `npm ci --omit=dev` leaves: the runtime dependencies only.
    await run('npm', ['prune', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: clone, env: { ...process.env, ...env }, timeout: 300_000 });
    // Vite is gone (TypeScript stays: tRPC names it as a peer dependency).
    expect(existsSync(join(clone, 'node_modules', 'vite'))).toBe(false);
    // npm runs prepare in a production install too; without the compilers it must not fail.
    const prepared = await run(process.execPath, ['scripts/package-lifecycle.mjs', 'prepare'], { cwd: clone, env: { ...process.env, ...env } });
    expect(prepared.stdout).toContain('dist/ is not built');

    const productionEnv = { ...env, DATABASE_URL: `file:${join(root, 'production', 'assistant.db')}` };
    const migrated = await run('npm', ['run', '--silent', 'migrate'], { cwd: clone, env: { ...process.env, ...productionEnv } });
    expect(migrated.stdout).toMatch(/applied \d+ migration/);
    const again = await run('npm', ['run', '--silent', 'migrate'], { cwd: clone, env: { ...process.env, ...productionEnv } });
    expect(again.stdout).toContain('is up to date');

    // A source newer than the build, as after a `git pull` without a build: started as it is.
    const later = new Date(Date.now() + 4000);
    utimesSync(join(clone, 'src', 'main.ts'), later, later);
    const port = await freePort();
    const started = await npmStart(clone, productionEnv, port);
    expect(started.output()).toContain('build tools (devDependencies) are not installed; starting the existing build');
    expect(await stopWithSigterm(started, port)).toEqual({ code: 0, signal: null });
  }, 600_000);
});
