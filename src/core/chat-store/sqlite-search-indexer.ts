import type Database from 'better-sqlite3';
import { INDEXED_CHARACTERS, STEP_BUDGET_MS } from './sqlite-conversation-reads-long.js';
import type { SqliteWriteBatch } from './sqlite-write-batch.js';

// The search index fed off the writers' commits (the search_pending migration): a stored message
// gets a row in "ConversationSearchPending", and this moves pending rows into the FTS5 index a
// step at a time, in the chat store's group commit. FTS5 writes a segment of its index per
// commit, so indexing a few hundred messages in one commit costs little more than one did (an
// exchange's writes took 330–460 µs with its two messages indexed in their own commits, 170–200 µs
// with pending rows and this). Until a message is moved, the search reads it in full from the
// pending list (sqlite-conversation-reads-long.ts), so nothing waits for this to be found.

/** How long after a write the pending rows are moved: long enough to gather many in one step. */
export const INDEX_DELAY_MS = 250;
/** Pending rows read per statement; a step stops sooner when its time is used. */
const ROWS_PER_READ = 256;

interface PendingRow {
  conversationId: string;
  messageId: string;
  /** The message's indexed head; null when the message has gone (its row is dropped). */
  text: string | null;
}

export interface IndexStatements {
  pending: Database.Statement<[number], PendingRow>;
  dropEntry: Database.Statement<[string]>;
  dropIndexed: Database.Statement<[string]>;
  addEntry: Database.Statement<[string, string]>;
  addIndexed: Database.Statement<[bigint, string]>;
  done: Database.Statement<[string, string]>;
}

export function prepareIndexStatements(db: Database.Database): IndexStatements {
  return {
    pending: db.prepare(
      `SELECT p."conversationId" AS "conversationId", p."messageId" AS "messageId", substr(m."content", 1, ${INDEXED_CHARACTERS}) AS text
       FROM "ConversationSearchPending" p LEFT JOIN "Message" m ON m.id = p."messageId" LIMIT ?`,
    ),
    // As the update trigger does: an entry the message still has (none, normally) goes first, so
    // the index never holds two texts for one message or a text no entry names.
    dropIndexed: db.prepare(`DELETE FROM "ConversationSearch" WHERE rowid = (SELECT id FROM "ConversationSearchEntry" WHERE "messageId" = ?)`),
    dropEntry: db.prepare(`DELETE FROM "ConversationSearchEntry" WHERE "messageId" = ?`),
    addEntry: db.prepare(`INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") VALUES (?, ?)`),
    addIndexed: db.prepare(`INSERT INTO "ConversationSearch" (rowid, "text") VALUES (?, ?)`),
    done: db.prepare(`DELETE FROM "ConversationSearchPending" WHERE "conversationId" = ? AND "messageId" = ?`),
  };
}

/**
 * Moves pending rows into the index until none is left or `budgetMs` is used (checked after each
 * row: one row is at most INDEXED_CHARACTERS characters). Runs inside the caller's transaction.
 * Returns whether pending rows may remain.
 */
export function indexPending(statements: IndexStatements, budgetMs: number): boolean {
  const started = performance.now();
  for (;;) {
    const rows = statements.pending.all(ROWS_PER_READ);
    for (const row of rows) {
      statements.dropIndexed.run(row.messageId);
      statements.dropEntry.run(row.messageId);
      if (row.text !== null) {
        const entry = statements.addEntry.run(row.conversationId, row.messageId).lastInsertRowid;
        statements.addIndexed.run(BigInt(entry), row.text);
      }
      statements.done.run(row.conversationId, row.messageId);
      if (performance.now() - started > budgetMs) return true;
    }
    if (rows.length < ROWS_PER_READ) return false;
  }
}

/** Everything pending, in one transaction: for a database seeded outside the service (tests, benchmarks). */
export function indexAllPending(db: Database.Database): void {
  const statements = prepareIndexStatements(db);
  db.transaction(() => indexPending(statements, Infinity))();
}

/**
 * The chat store's indexer: a step INDEX_DELAY_MS after the store's own writes, steps back to
 * back (one per group commit) while a backlog lasts, and a sweep every few seconds for what
 * other connections queued (Prisma's writes, the import thread's leftovers, a crash's).
 */
export class SqliteSearchIndexer {
  private readonly statements: IndexStatements;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private readonly sweep: NodeJS.Timeout;
  private stopped = false;

  constructor(
    db: Database.Database,
    private readonly writes: SqliteWriteBatch,
    sweepMs = 5_000,
  ) {
    this.statements = prepareIndexStatements(db);
    this.sweep = setInterval(() => {
      this.soon(0);
    }, sweepMs);
    this.sweep.unref();
    // Whatever a stop or a crash left pending.
    this.soon(0);
  }

  /** The store wrote messages: move them in a while, with whatever else comes meanwhile. */
  queued(): void {
    this.soon(INDEX_DELAY_MS);
  }

  /** Resolves once no step is under way (the rows still pending stay for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweep);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private soon(delayMs: number): void {
    if (this.stopped || this.timer !== null || this.running !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.step().finally(() => {
        this.running = null;
      });
    }, delayMs);
    this.timer.unref();
  }

  private async step(): Promise<void> {
    let more: boolean;
    try {
      more = await this.writes.run(() => indexPending(this.statements, STEP_BUDGET_MS));
    } catch {
      // The pending rows stay pending and searchable (read in full); the next sweep tries again.
      return;
    }
    if (more && !this.stopped)
      setImmediate(() => {
        this.soon(0);
      });
  }
}
