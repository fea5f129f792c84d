import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors/app-error.js';
import type { WholeConversation } from './chat-store.js';
import { BUSY_WAIT_LIMIT_MS, isBusy } from './sqlite-busy.js';
import { IMPORT_THREAD_SOURCE } from './sqlite-import-thread-source.js';

// Whole conversations written and removed by a thread of their own (issue 20): on the event loop,
// even in steps of 6 ms, an import's rows were the largest share of what held it under load
// (15.8 % of a profile of the hostile mix). The thread has its own connection to the database
// file; WAL lets the event loop's connections read beside it, and it commits in short steps that
// leave the write lock free between them (sqlite-import-thread-source.ts). When a job resolves,
// its last commit is done, so every connection's next read sees the result.
//
// The thread starts with the first job, so a start-up never pays for it, and it keeps the
// process alive only while a job is under way.

/**
 * How long a step may hold SQLite's write lock, and how long the thread then leaves it free: the
 * event loop's group commit tries again every millisecond or so and finds it free, and a Prisma
 * write (which waits inside the event loop) waits for one short step at most.
 */
const STEP_BUDGET_MS = 2;
const PAUSE_MS = 4;
/** Rows written (or removed) between looks at the clock. */
const ROWS_PER_RUN = 16;
/** Below the event loop's threads' priority (0); 19 is the lowest. */
const NICENESS = 10;
/**
 * The rows of an import go to the thread in slices, an event-loop turn apart: copying 10,000
 * messages to a thread at once takes 5–30 ms of the loop, a slice under one.
 */
const SLICE_ROWS = 500;
const SLICE_CHARACTERS = 256 * 1024;

type Reply = { job: number; ok: true } | { job: number; ok: false; error: { name: string; message: string; code?: string } };

interface Pending {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class SqliteImportThread {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextJob = 1;
  private stopped = false;

  /**
   * `path`: the database file; `importingOwner`: the owner a conversation has while it is written
   * (sqlite-whole-conversation.ts).
   */
  constructor(
    private readonly path: string,
    private readonly importingOwner: string,
  ) {}

  /** Writes `conversation` whole, dated `at`; resolves once it is committed and owned. */
  async insert(conversation: WholeConversation, at: string): Promise<void> {
    const { messages, ...head } = conversation;
    const { job, done } = this.begin();
    // Should the thread fail while the slices are still being sent, the rejection waits for the
    // `await` below rather than counting as unhandled.
    done.catch(() => undefined);
    const worker = this.started();
    worker.postMessage({ op: 'insert', job, head, at, total: messages.length });
    let from = 0;
    while (from < messages.length) {
      let end = from;
      let characters = 0;
      while (end < messages.length && end - from < SLICE_ROWS && characters < SLICE_CHARACTERS) {
        characters += messages[end]?.content.length ?? 0;
        end++;
      }
      // A thread that failed meanwhile has rejected the job: nothing more to send.
      if (!this.pending.has(job)) break;
      worker.postMessage({ op: 'rows', job, rows: messages.slice(from, end) });
      from = end;
      if (from < messages.length) await nextTurn();
    }
    await done;
  }

  /** Removes the messages [0, seqs) of a conversation under the importing owner, then the conversation. */
  remove(id: string, seqs: number): Promise<void> {
    const { job, done } = this.begin();
    this.started().postMessage({ op: 'remove', job, id, seqs });
    return done;
  }

  /** Ends the thread after its current step; jobs under way fail (what they wrote is swept later). */
  async stop(): Promise<void> {
    this.stopped = true;
    const worker = this.worker;
    if (!worker) return;
    worker.ref();
    const exited = new Promise<void>((resolve) => {
      worker.once('exit', () => {
        resolve();
      });
    });
    worker.postMessage({ op: 'stop' });
    // A thread stuck in a statement is not waited for long.
    const stuck = setTimeout(() => void worker.terminate(), 2000);
    await exited;
    clearTimeout(stuck);
  }

  private begin(): { job: number; done: Promise<void> } {
    if (this.stopped) throw new AppError('SERVICE_UNAVAILABLE', 'The service is stopping; try again');
    const job = this.nextJob++;
    const done = new Promise<void>((resolve, reject) => {
      this.pending.set(job, { resolve, reject });
    });
    return { job, done };
  }

  private started(): Worker {
    if (this.worker) {
      this.worker.ref();
      return this.worker;
    }
    const worker = new Worker(IMPORT_THREAD_SOURCE, {
      eval: true,
      workerData: {
        // The driver by the absolute path the service resolved, so the thread loads the same copy.
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        path: this.path,
        busyTimeoutMs: BUSY_WAIT_LIMIT_MS,
        importingOwner: this.importingOwner,
        stepBudgetMs: STEP_BUDGET_MS,
        pauseMs: PAUSE_MS,
        rowsPerRun: ROWS_PER_RUN,
        niceness: NICENESS,
      },
    });
    worker.on('message', (reply: Reply) => {
      this.settle(reply);
    });
    // A thread that fails (or is stopped) takes its jobs with it; the next job starts another.
    const lost = (error: unknown) => {
      if (this.worker === worker) this.worker = null;
      const jobs = [...this.pending.values()];
      this.pending.clear();
      for (const job of jobs) job.reject(error);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      lost(new Error(`The import thread ended (exit code ${code})`));
    });
    this.worker = worker;
    return worker;
  }

  private settle(reply: Reply): void {
    const job = this.pending.get(reply.job);
    if (!job) return;
    this.pending.delete(reply.job);
    // The process may end while the thread is idle; a job under way keeps it going.
    if (this.pending.size === 0) this.worker?.unref();
    if (reply.ok) {
      job.resolve();
      return;
    }
    const error = Object.assign(new Error(reply.error.message), { name: reply.error.name, code: reply.error.code });
    if (isBusy(error)) job.reject(new AppError('SERVICE_UNAVAILABLE', 'The database is busy; try again', { cause: error }));
    else if (reply.error.code === 'IMPORT_THREAD_STOPPING') job.reject(new AppError('SERVICE_UNAVAILABLE', 'The service is stopping; try again', { cause: error }));
    else job.reject(error);
  }
}
