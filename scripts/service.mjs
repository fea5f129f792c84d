// The service's own commands, with one rule for when dist/ is rebuilt:
//   node scripts/service.mjs build     `npm run build`: tsc and Vite into dist/, then the build stamp
//   node scripts/service.mjs start     `npm start`: rebuild if needed, then run node dist/main.js
//   node scripts/service.mjs migrate   `npm run migrate`: rebuild if needed, apply migrations, exit
//
// A build is recorded in dist/.build-stamp, whose modification time is the moment the build
// started: a source saved while a build runs is newer than the stamp and triggers the next one.
// The compiled files' own times cannot serve: tsc's incremental build leaves unchanged outputs
// untouched, so dist/main.js can be older than a source that changed nothing in it.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const stampPath = join(root, 'dist', '.build-stamp');
const require = createRequire(join(root, 'package.json'));

/** What the build reads: a change to any of them makes the build stale. */
const inputs = ['src', 'web', 'prisma', 'tsconfig.json', 'tsconfig.build.json', 'vite.config.ts'];

/** What a start needs from the build. */
const outputs = ['dist/main.js', 'dist/web/index.html'];

function newestModification(path) {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = stats.mtimeMs; // a deleted or renamed file shows only in its folder's time
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestModification(join(path, entry)));
  return newest;
}

/** `missing`: nothing to start; `stale`: a source is newer than the last build; `fresh`. */
function buildState() {
  if (!outputs.every((output) => existsSync(join(root, output)))) return 'missing';
  if (!existsSync(stampPath)) return 'stale';
  const built = statSync(stampPath).mtimeMs;
  return inputs.some((input) => newestModification(join(root, input)) > built) ? 'stale' : 'fresh';
}

/**
 * The compilers are devDependencies: a production install (`npm ci --omit=dev`) has none. Vite
 * is the one to look for: TypeScript stays in a production install as tRPC's peer dependency.
 */
function buildToolsInstalled() {
  try {
    require.resolve('typescript/package.json');
    require.resolve('vite/package.json');
    return true;
  } catch {
    return false;
  }
}

/** A package's command by its package.json `bin` (Vite's exports do not expose its bin file). */
function bin(name, command) {
  const manifestPath = require.resolve(`${name}/package.json`);
  const { bin: bins } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  return join(dirname(manifestPath), typeof bins === 'string' ? bins : bins[command]);
}

/** Builds dist/ and records it; the exit status of the step that failed, else 0. */
function build() {
  const startedAt = new Date();
  // A build that fails half way must not leave the last good stamp claiming the new sources.
  rmSync(stampPath, { force: true });
  const steps = [
    [bin('typescript', 'tsc'), '-p', 'tsconfig.build.json'],
    [bin('vite', 'vite'), 'build', '--logLevel', 'warn'],
  ];
  for (const args of steps) {
    const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
    if (result.status !== 0) return result.status ?? 1;
  }
  mkdirSync(dirname(stampPath), { recursive: true });
  closeSync(openSync(stampPath, 'w'));
  utimesSync(stampPath, startedAt, startedAt);
  return 0;
}

/**
 * Rebuilds dist/ when a source is newer, where the compilers are installed; without them a stale
 * build is started as it is (a production install ships dist/ built). Returns false, having said
 * why on stderr, when there is nothing (good) to run.
 */
function ensureBuilt() {
  const state = buildState();
  if (state === 'fresh') return true;
  if (!buildToolsInstalled()) {
    if (state === 'missing') {
      console.error('dist/ is not built and the build tools (devDependencies) are not installed: run `npm ci` and `npm run build` first, or copy a built dist/ here');
      return false;
    }
    console.error('note: the sources are newer than dist/, but the build tools (devDependencies) are not installed; starting the existing build');
    return true;
  }
  console.error(state === 'missing' ? 'building dist/ (first start)' : 'sources changed since the last build; rebuilding dist/');
  return build() === 0;
}

/**
 * Runs `node dist/main.js` as a child sharing this terminal. Node cannot replace its own process
 * (no exec), so the launcher stays as a thin parent: it passes on the signals a process manager or
 * Ctrl-C sends, so the service's graceful stop runs, and ends with the service's exit code (or by
 * the same signal), so no `node dist/main.js` outlives `npm start`.
 *
 * npm forwards SIGTERM and SIGINT to the script's process, which is `sh -c <script>`; the shell
 * would die without passing them on, hence `exec node scripts/service.mjs start` in package.json,
 * which makes this launcher that process. Should the parent still go (npm killed with -9), the
 * launcher notices and stops the service the same graceful way.
 */
function start(args) {
  const service = spawn(process.execPath, [join(root, 'dist', 'main.js'), ...args], { stdio: 'inherit' });
  const forwarded = { SIGTERM: 'SIGTERM', SIGINT: 'SIGINT', SIGHUP: 'SIGTERM' }; // a closed terminal: a graceful stop
  for (const [received, sent] of Object.entries(forwarded)) {
    // Ctrl-C reaches the whole process group, the service included; the service ignores a repeat.
    process.on(received, () => service.kill(sent));
  }
  const parent = process.ppid;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      service.kill('SIGTERM');
    }
  }, 1000).unref();
  service.on('error', (error) => {
    console.error(`cannot run node dist/main.js: ${error.message}`);
    process.exit(1);
  });
  service.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Ended by a signal it did not handle: end the same way, so the caller sees what happened.
    for (const received of Object.keys(forwarded)) process.removeAllListeners(received);
    process.kill(process.pid, signal);
  });
}

/**
 * Applies the pending migrations of DATABASE_URL (read as the service reads it, `.env` included)
 * and exits: an upgrade step before the new version starts (which would also migrate at start).
 * The compiled migrator, so a production install without a TypeScript runner has it too.
 */
async function migrateOnly() {
  const { ConfigError, loadConfig } = await import('../dist/core/config/load-config.js');
  const { describeDatabase, startupFailureLine } = await import('../dist/core/config/startup-failure.js');
  const { migrate } = await import('../dist/core/db/migrate.js');
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    return 1;
  }
  try {
    const result = await migrate(config.DATABASE_URL);
    const where = describeDatabase(config.DATABASE_URL);
    if (result.applied.length === 0) console.log(`${where} is up to date: no migration to apply`);
    else console.log(`${where}: applied ${result.applied.length} migration(s): ${result.applied.join(', ')}`);
    if (result.modified.length > 0) console.error(`warning: applied migrations were edited after they ran: ${result.modified.join(', ')}`);
    return 0;
  } catch (error) {
    const line = startupFailureLine(error, config);
    if (line === undefined) throw error;
    console.error(line.replace(/^Cannot start: /, 'Cannot migrate: '));
    return 1;
  }
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'build') {
  process.exit(build());
} else if (command === 'start') {
  if (!ensureBuilt()) process.exit(1);
  start(rest);
} else if (command === 'migrate') {
  if (!ensureBuilt()) process.exit(1);
  process.exit(await migrateOnly());
} else {
  console.error('usage: node scripts/service.mjs build|start|migrate');
  process.exit(2);
}
