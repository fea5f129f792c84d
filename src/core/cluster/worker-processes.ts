import cluster, { type Address, type Worker } from 'node:cluster';
import type { Config } from '../config/load-config.js';
import { startupFailureLine } from '../config/startup-failure.js';
import type { Logger } from '../logger.js';

// WORKERS > 1: several processes of the service behind one port, so one machine's cores all run
// it (one Node process runs its JavaScript on one core). The primary forks the workers
// (node:cluster); each runs the whole service as one instance of the several-instances mode
// (README "Several instances"): an instance id of its own, its streams copied to Redis, its
// terminals reached through the bus, rate limits counted in Redis, everything stored in
// PostgreSQL, which is why the configuration refuses WORKERS > 1 without them. The primary serves
// nothing: it accepts connections and hands them to the workers in turn (Node's round-robin),
// migrates the database once before the first fork, replaces a worker that dies, and passes a
// stop on to every worker.

/** Whether this process is the primary of several workers (it runs superviseWorkers, not the service). */
export function isWorkerPrimary(config: Config): boolean {
  return config.WORKERS > 1 && cluster.isPrimary;
}

/** A worker's log lines carry its number: the lines of several processes share one output. */
export function workerLogger(logger: Logger): Logger {
  const worker = cluster.worker;
  return worker === undefined ? logger : logger.child({ worker: worker.id });
}

/** Migrates, forks the workers and watches them until a stop; the process exits from here. */
export async function superviseWorkers(config: Config, logger: Logger): Promise<void> {
  if (config.ENABLE_SYSTEM_COMMANDS) {
    logger.warn(
      `WORKERS=${config.WORKERS} with ENABLE_SYSTEM_COMMANDS: a terminal lives in the worker that created it, and its socket (/api/terminals/:id/ws) is refused with 503 on the others; a connection reaches whichever worker is next, so the web terminal may need reopening (its REST calls are carried to the right worker)`,
    );
  }
  // Once here rather than by every worker at once (they would queue on the migration lock, and
  // each log what the first applied); a worker's own migrate() then finds nothing to do.
  if (!(await migrateOnce(config, logger))) process.exit(1);
  new WorkerSupervisor(config, logger).start();
}

async function migrateOnce(config: Config, logger: Logger): Promise<boolean> {
  try {
    const { migrate } = await import('../db/migrate.js');
    const migration = await migrate(config.DATABASE_URL);
    if (migration.applied.length > 0) logger.info({ applied: migration.applied }, 'database migrated');
    return true;
  } catch (error) {
    // As main.ts does: a setting's mistake is one line naming it, anything else a fault with its stack.
    const line = startupFailureLine(error, config);
    if (line === undefined) logger.fatal({ err: error }, 'start-up failed');
    else process.stderr.write(`${line}\n`);
    return false;
  }
}

/** Deaths within this window make the next replacement wait longer (a worker that cannot start). */
const DEATH_WINDOW_MS = 60_000;
const MAX_RESTART_DELAY_MS = 30_000;

class WorkerSupervisor {
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #live = new Set<Worker>();
  /** Live workers whose HTTP server listens. */
  readonly #listening = new Set<Worker>();
  readonly #restarts = new Set<NodeJS.Timeout>();
  #deaths: number[] = [];
  #restForked = false;
  #announced = false;
  #stopping = false;
  #stopFailed = false;

  constructor(config: Config, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  start(): void {
    cluster.on('listening', (worker, address) => {
      this.#listened(worker, address);
    });
    cluster.on('exit', (worker, code, signal) => {
      this.#exited(worker, code, signal as NodeJS.Signals | null);
    });
    process.on('SIGTERM', () => {
      this.#stop('SIGTERM');
    });
    process.on('SIGINT', () => {
      this.#stop('SIGINT');
    });
    this.#logger.info({ workers: this.#config.WORKERS }, `starting ${this.#config.WORKERS} worker processes`);
    // The first alone: a setting's mistake (a port in use, a database away) then stops the start
    // with the one line that worker printed, instead of one line per worker.
    this.#fork();
  }

  #fork(): void {
    this.#live.add(cluster.fork());
  }

  #listened(worker: Worker, address: Address): void {
    // Only the service's HTTP port: any other listener a worker opened would be its own business.
    if ((address.addressType !== 4 && address.addressType !== 6) || this.#listening.has(worker) || !this.#live.has(worker)) return;
    this.#listening.add(worker);
    this.#logger.info({ worker: worker.id, pid: worker.process.pid }, 'worker listening');
    if (!this.#restForked && !this.#stopping) {
      this.#restForked = true;
      for (let i = 1; i < this.#config.WORKERS; i++) this.#fork();
    }
    if (!this.#announced && this.#listening.size === this.#config.WORKERS) {
      this.#announced = true;
      const host = address.addressType === 6 ? `[${address.address}]` : address.address;
      const url = `http://${host}:${address.port}`;
      this.#logger.info({ url, workers: this.#config.WORKERS }, `${this.#config.WORKERS} workers listening on ${url}`);
    }
  }

  #exited(worker: Worker, code: number, signal: NodeJS.Signals | null): void {
    this.#live.delete(worker);
    this.#listening.delete(worker);
    if (this.#stopping) {
      if (code !== 0 || signal !== null) this.#stopFailed = true;
      if (this.#live.size === 0) this.#finish();
      return;
    }
    if (!this.#restForked) {
      // The first worker could not start; it said why (a signal says nothing, so that is logged).
      if (signal !== null) this.#logger.fatal({ worker: worker.id, signal }, 'the first worker was killed before it listened');
      process.exit(code === 0 ? 1 : code);
    }
    const now = Date.now();
    this.#deaths = [...this.#deaths.filter((at) => now - at < DEATH_WINDOW_MS), now];
    // One death is replaced at once; more within the window wait longer each time, so a worker
    // that cannot start (the database gone) is not forked in a tight loop.
    const delayMs = this.#deaths.length <= 1 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 500 * 2 ** (this.#deaths.length - 2));
    this.#logger.error({ worker: worker.id, pid: worker.process.pid, code, signal, restartInMs: delayMs }, 'a worker stopped; starting another');
    const timer = setTimeout(() => {
      this.#restarts.delete(timer);
      this.#fork();
    }, delayMs);
    this.#restarts.add(timer);
  }

  #stop(signal: NodeJS.Signals): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#logger.info({ signal }, 'shutting down');
    for (const timer of this.#restarts) clearTimeout(timer);
    // Each worker runs the service's own graceful stop (main.ts); one that a terminal's Ctrl-C
    // reached already (the whole process group gets it) ignores the repeat.
    for (const worker of this.#live) worker.process.kill('SIGTERM');
    // A worker's own guard ends it SHUTDOWN_TIMEOUT_MS + 2 s after the signal; this one is later.
    setTimeout(() => {
      for (const worker of this.#live) worker.process.kill('SIGKILL');
      this.#logger.error('workers did not stop in time');
      process.exit(1);
    }, this.#config.SHUTDOWN_TIMEOUT_MS + 4000).unref();
    if (this.#live.size === 0) this.#finish();
  }

  #finish(): void {
    this.#logger.info('stopped');
    process.exit(this.#stopFailed ? 1 : 0);
  }
}
