import type Database from 'better-sqlite3';
import { newId } from '../ids.js';
import type { WholeConversation } from './chat-store.js';
import type { SqliteWriteBatch } from './sqlite-write-batch.js';

// A conversation stored whole on SQLite (an import of up to MAX_IMPORT_MESSAGES messages, a /v1
// transcript) without holding the event loop: the rows are written in steps of a few
// milliseconds, each its own group commit (sqlite-write-batch.ts), so requests are served between
// them and no transaction spans a turn. One transaction across the steps would hold SQLite's write
// lock across turns, which every other writer (Prisma's connection waits inside the thread) would
// pay for. Instead the conversation is written under an owner no reader asks for, and the last
// step hands it to its owner in the same commit as its last messages: readers see it whole or
// not at all. A process that dies part way leaves only an unowned conversation, removed in steps
// by a later import once it is ABANDONED_AFTER_MS old. Each message costs ~50 µs with the search
// index's triggers (ten times the row alone), and each commit flushes the index: a step is a few
// milliseconds of writing plus its commit.

/**
 * The owner of a conversation being written. Never a user's id: user ids are the built-in
 * `local`/`anonymous` or a token's `sub`, which is at most 255 characters (verify-access-token.ts).
 */
export const IMPORTING_OWNER = 'import under way: not a user '.padEnd(300, '-');

/** How long one step may write before it lets the event loop serve others. */
const STEP_BUDGET_MS = 6;
/**
 * Rows written (or removed) between looks at the clock; a step does at least one run (~3 ms with
 * the search index), so a conversation this short (a /v1 transcript, most imports) is one commit.
 */
const ROWS_PER_RUN = 64;
/** An unowned conversation this old belongs to an import that died with its process. */
export const ABANDONED_AFTER_MS = 10 * 60_000;

/** As Prisma's better-sqlite3 adapter writes DateTime. */
function timestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
}

function prepareStatements(db: Database.Database) {
  return {
    head: db.prepare<[string, string, string, string, number, number, string, string]>(
      `INSERT INTO "Conversation" (id, "ownerId", title, metadata, "messageCount", "nextSeq", "createdAt", "lastModified")
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    message: db.prepare<[string, string, number, string, string, string | null, string]>(
      `INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", streaming, "createdAt")
       VALUES (?, ?, ?, ?, ?, ?, 0, ?)`,
    ),
    publish: db.prepare<[string, string, string]>(`UPDATE "Conversation" SET "ownerId" = ? WHERE id = ? AND "ownerId" = ?`),
    // Found through the ("ownerId", "lastModified") index.
    abandoned: db.prepare<[string, string], { id: string; nextSeq: number }>(
      `SELECT id, "nextSeq" FROM "Conversation" WHERE "ownerId" = ? AND "lastModified" < ? LIMIT 1`,
    ),
    // Through the ("conversationId", seq) index; each row also leaves the search index (its trigger).
    removeMessages: db.prepare<[string, number, number]>(`DELETE FROM "Message" WHERE "conversationId" = ? AND seq >= ? AND seq < ?`),
    removeHead: db.prepare<[string, string]>(`DELETE FROM "Conversation" WHERE id = ? AND "ownerId" = ?`),
    // A deletion first takes the conversation from its owner, dated so that a sweep takes what a
    // crash leaves of it at once, and from whoever has it as their current one.
    hide: db.prepare<[string, string, string, string], { nextSeq: number }>(
      `UPDATE "Conversation" SET "ownerId" = ?, "lastModified" = ? WHERE id = ? AND "ownerId" = ? RETURNING "nextSeq"`,
    ),
    forgetCurrent: db.prepare<[string]>(`UPDATE "UserState" SET "currentConversationId" = NULL WHERE "currentConversationId" = ?`),
  };
}

export class SqliteWholeConversation {
  private readonly statements: ReturnType<typeof prepareStatements>;

  constructor(
    db: Database.Database,
    private readonly writes: SqliteWriteBatch,
  ) {
    this.statements = prepareStatements(db);
  }

  async insert(conversation: WholeConversation): Promise<void> {
    const now = new Date();
    await this.sweep(timestamp(new Date(now.getTime() - ABANDONED_AFTER_MS)));
    const at = timestamp(now);
    const { messages } = conversation;
    let written = 0;
    let started = false;
    try {
      do {
        const from = written;
        written = await this.writes.run(() => {
          if (from === 0) this.statements.head.run(conversation.id, IMPORTING_OWNER, conversation.title, conversation.metadata, conversation.messageCount, messages.length, at, at);
          const end = this.writeMessages(conversation, from, at);
          if (end === messages.length) this.statements.publish.run(conversation.ownerId, conversation.id, IMPORTING_OWNER);
          return end;
        });
        started = true;
      } while (written < messages.length);
    } catch (error) {
      // A failed step was undone alone (its savepoint); the steps before it are still unowned.
      if (started) await this.remove(conversation.id, messages.length).catch(() => undefined);
      throw error;
    }
  }

  /**
   * Deletes a conversation of `ownerId` without holding the event loop: one commit takes it from
   * its owner (no reader finds it from then on, and it is nobody's current conversation), then its
   * messages go in steps, as an import writes them. A crash part way leaves an unowned
   * conversation, which the next import's sweep removes. False when it was not the owner's.
   */
  async delete(ownerId: string, id: string): Promise<boolean> {
    const hidden = await this.writes.run(() => {
      const row = this.statements.hide.get(IMPORTING_OWNER, timestamp(new Date(0)), id, ownerId);
      if (row) this.statements.forgetCurrent.run(id);
      return row;
    });
    if (!hidden) return false;
    await this.remove(id, hidden.nextSeq);
    return true;
  }

  /** Removes the unowned conversations of imports that died with their process. */
  private async sweep(before: string): Promise<void> {
    for (;;) {
      const left = await this.writes.run(() => this.statements.abandoned.get(IMPORTING_OWNER, before));
      if (!left) return;
      await this.remove(left.id, left.nextSeq);
    }
  }

  /** Removes an unowned conversation, its messages in steps as they were written. */
  private async remove(id: string, seqs: number): Promise<void> {
    let removed = 0;
    while (removed < seqs) {
      const from = removed;
      removed = await this.writes.run(() => this.inSteps(from, seqs, (start, end) => this.statements.removeMessages.run(id, start, end)));
    }
    await this.writes.run(() => this.statements.removeHead.run(id, IMPORTING_OWNER));
  }

  /** Writes messages from `from` on until the step's time is used; returns where it stopped. */
  private writeMessages(conversation: WholeConversation, from: number, at: string): number {
    const { messages } = conversation;
    return this.inSteps(from, messages.length, (start, end) => {
      for (let seq = start; seq < end; seq++) {
        const message = messages[seq];
        if (message) this.statements.message.run(newId(), conversation.id, seq, message.role, message.content, message.toolCalls, at);
      }
    });
  }

  /**
   * Calls `work` on rows [start, end) in runs of ROWS_PER_RUN from `from` on, until STEP_BUDGET_MS
   * has passed (at least one run) or `until` is reached; returns where it stopped.
   */
  private inSteps(from: number, until: number, work: (start: number, end: number) => void): number {
    const deadline = performance.now() + STEP_BUDGET_MS;
    let next = from;
    do {
      const end = Math.min(next + ROWS_PER_RUN, until);
      work(next, end);
      next = end;
    } while (next < until && performance.now() < deadline);
    return next;
  }
}
