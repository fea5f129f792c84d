import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

// WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
// file when a commit finds the log past `wal_autocheckpoint` pages (1000, 4 MB): that commit's
// caller does the copying and the fsync, on its own thread. With imports and answers written
// steadily, one commit in ten paid 30–60 ms for it on the event loop (measured with 200,000
// messages and the search index). Here a thread of its own checkpoints every CHECKPOINT_EVERY_MS
// on its own connection (PASSIVE: it never waits for readers or writers, it copies what it can),
// and the chat store's connection stops checkpointing, so the log stays short and no commit of
// the chat store pays for it. Should the thread fail, the connection checkpoints by itself again.

const CHECKPOINT_EVERY_MS = 100;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

// Plain CommonJS, evaluated: nothing to build or load through tsx. The driver is required by the
// absolute path the service resolved, so the thread loads the same copy.
const CHECKPOINTER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { timeout: 0 });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or locked this time (another checkpoint, a migration): the next tick tries again.
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export class SqliteCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private stopping = false;

  /** `connection`: the one whose own checkpoints this thread takes over. */
  constructor(
    path: string,
    private readonly connection: Database.Database,
  ) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData: { driver, path, everyMs: CHECKPOINT_EVERY_MS } });
    // The thread alone never keeps the process alive.
    this.worker.unref();
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', () => {
        resolve();
      });
    });
    this.connection.pragma('wal_autocheckpoint = 0');
    const fallBack = () => {
      if (!this.stopping && this.connection.open) this.connection.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    };
    this.worker.on('error', fallBack);
    this.worker.on('exit', fallBack);
  }

  /** Stops the thread, after its current checkpoint; call before closing the database. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // Waited for, the thread must keep the process alive: unreferenced, the process would end
    // (with code 0) while the shutdown awaits it, before the rest of the stop ran.
    this.worker.ref();
    this.worker.postMessage('stop');
    // A thread stuck in a checkpoint is not waited for long.
    const stuck = setTimeout(() => void this.worker.terminate(), 2000);
    await this.exited;
    clearTimeout(stuck);
  }
}
