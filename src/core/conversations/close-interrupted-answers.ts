import type { Db } from '../db/create-db.js';
import type { Store } from '../db/store.js';

/**
 * Assistant messages still marked as streaming whose writer is gone belong to a process that
 * died mid-answer: they are closed with finishReason `error` (CONTRACT §6), keeping what was
 * stored. Several instances share one database, so the answers of a writer that still lives
 * (`alive`: it listens on the cluster bus; when that cannot be told, it is assumed alive and the
 * next run decides) are left alone. Without Redis there is one instance: every leftover is closed.
 */
export async function closeInterruptedAnswers(
  store: Store,
  self: string,
  alive: (instanceId: string) => Promise<boolean> = () => Promise.resolve(false),
): Promise<number> {
  const statements = store.kind === 'sqlite' ? sqliteStatements : postgresStatements;
  const writers = await statements.writers(store.db);
  let closed = 0;
  for (const { writer } of writers) {
    if (writer === self || (writer !== null && (await alive(writer).catch(() => true)))) continue;
    closed += await statements.close(store.db, writer);
  }
  return closed;
}

interface InterruptedStatements {
  /** The distinct writers of the answers still streaming (null: one written before writers were kept). */
  writers(db: Db): Promise<{ writer: string | null }[]>;
  /** Closes `writer`'s answers still streaming as `error`; how many it closed. */
  close(db: Db, writer: string | null): Promise<number>;
}

// Only the open answers are indexed, by partial indexes (the message_streaming_partial
// migration): a closed message costs no index entry. Each statement states the index's condition
// literally, as the planners need to use it: SQLite matches a partial index's WHERE clause word
// for word ("Message_growing_idx", WHERE "streaming" = 1; a bound `?` only in a build with STAT4,
// which plans again once the value is bound), and a PostgreSQL plan made for any value of a
// parameter cannot use it.
const sqliteStatements: InterruptedStatements = {
  writers: (db) => db.$queryRaw`SELECT DISTINCT "writer" FROM "Message" WHERE "streaming" = 1`,
  // `IS` compares null as a value; only the few streaming rows are read, so the writer is tested on each.
  close: (db, writer) =>
    db.$executeRaw`UPDATE "Message" SET "streaming" = 0, "finishReason" = 'error' WHERE "streaming" = 1 AND "writer" IS ${writer}`,
};

// "Message_streaming_writer_idx" is keyed by writer WHERE "streaming": the writers are read from
// the index alone, and each writer's answers are sought in it (`=` and IS NULL are its conditions;
// IS NOT DISTINCT FROM is not).
const postgresStatements: InterruptedStatements = {
  writers: (db) => db.$queryRaw`SELECT DISTINCT "writer" FROM "Message" WHERE "streaming"`,
  close: (db, writer) =>
    writer === null
      ? db.$executeRaw`UPDATE "Message" SET "streaming" = false, "finishReason" = 'error' WHERE "streaming" AND "writer" IS NULL`
      : db.$executeRaw`UPDATE "Message" SET "streaming" = false, "finishReason" = 'error' WHERE "streaming" AND "writer" = ${writer}`,
};

/**
 * For the periodic run: a writer counts as gone only when missing from the bus on two runs in a
 * row. Right after a Redis restart the instances' listening connections come back a moment after
 * their other ones, and one reading then must not close the answers of writers still at work.
 */
export function missingTwice(listening: (instanceId: string) => Promise<boolean>): (instanceId: string) => Promise<boolean> {
  const missedOnce = new Set<string>();
  return async (writer) => {
    if (await listening(writer)) {
      missedOnce.delete(writer);
      return true;
    }
    if (missedOnce.delete(writer)) return false;
    missedOnce.add(writer);
    return true;
  };
}
