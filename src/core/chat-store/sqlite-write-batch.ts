import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { AppError } from '../errors/app-error.js';
import { BUSY_WAIT_LIMIT_MS, isBusy } from './sqlite-busy.js';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for SQLite: the writes asked for during one event-loop turn run in one
 * transaction, committed before the next turn, and each caller's promise settles once its write
 * is committed. A commit writes every page it changed to the WAL, so with fifty exchanges under way
 * one commit for all of them costs about what one costs alone. Each write runs inside a savepoint:
 * one that throws is undone alone and rejects alone.
 *
 * While another connection holds the write lock (Prisma's interactive transactions hold it across
 * turns), BEGIN fails at once, since this connection has no busy timeout: the batch is tried again
 * after a pause, between turns, so the holder can finish; past BUSY_WAIT_LIMIT_MS it fails with 503.
 */
export class SqliteWriteBatch {
  private queue: Pending[] = [];
  private scheduled = false;
  private busySince: number | null = null;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly undo: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT write');
    this.release = db.prepare('RELEASE write');
    this.undo = db.prepare('ROLLBACK TO write');
  }

  /** Runs `write` (synchronous statements) in the next group commit; resolves with its result once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      this.schedule(0);
    });
  }

  private schedule(delayMs: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.flush();
    };
    if (delayMs === 0) setImmediate(flush);
    else void sleep(delayMs).then(flush);
  }

  private flush(): void {
    if (this.queue.length === 0) return;
    try {
      this.begin.run();
    } catch (error) {
      this.waitForLock(error);
      return;
    }
    this.busySince = null;
    const batch = this.queue;
    this.queue = [];
    let outcomes: Outcome[];
    try {
      outcomes = batch.map((pending) => this.attempt(pending));
      this.commit.run();
    } catch (error) {
      // Only the transaction itself can fail here (a full disk, an I/O error): nothing of it stays.
      this.rollBack();
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) pending.resolve(outcome.value);
      else pending.reject(outcome?.error);
    });
  }

  private rollBack(): void {
    if (!this.db.inTransaction) return;
    try {
      this.rollback.run();
    } catch {
      // SQLite has rolled back by itself (it does on some I/O errors); nothing is left open.
    }
  }

  private attempt(pending: Pending): Outcome {
    this.savepoint.run();
    try {
      const value = pending.write();
      this.release.run();
      return { ok: true, value };
    } catch (error) {
      this.undo.run();
      this.release.run();
      return { ok: false, error };
    }
  }

  private waitForLock(error: unknown): void {
    if (!isBusy(error)) {
      this.failAll(error);
      return;
    }
    const now = performance.now();
    this.busySince ??= now;
    if (now - this.busySince > BUSY_WAIT_LIMIT_MS) {
      this.busySince = null;
      this.failAll(new AppError('SERVICE_UNAVAILABLE', 'The database is busy; try again', { cause: error }));
      return;
    }
    this.schedule(Math.min(1 + (now - this.busySince) / 10, 50));
  }

  private failAll(error: unknown): void {
    const batch = this.queue;
    this.queue = [];
    for (const pending of batch) pending.reject(error);
  }
}
