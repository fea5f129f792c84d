import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors/app-error.js';

/** As long as Prisma's connection waits for a lock (its busy timeout, create-db.ts). */
export const BUSY_WAIT_LIMIT_MS = 5000;

export function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs a synchronous SQLite operation, and again after a short pause while another connection
 * holds the lock it needs, for up to BUSY_WAIT_LIMIT_MS; past that the database counts as
 * unavailable (503). Waiting here, between event-loop turns, lets the holder finish.
 */
export async function retryWhileBusy<T>(operation: () => T): Promise<T> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return operation();
    } catch (error) {
      if (!isBusy(error)) throw error;
      if (performance.now() - started > BUSY_WAIT_LIMIT_MS) {
        throw new AppError('SERVICE_UNAVAILABLE', 'The database is busy; try again', { cause: error });
      }
    }
    await sleep(Math.min(2 ** attempt, 50));
  }
}
