import type Database from 'better-sqlite3';
import { newId } from '../ids.js';
import type { WholeConversation } from './chat-store.js';
import { SqliteImportThread } from './sqlite-import-thread.js';
import type { SqliteWriteBatch } from './sqlite-write-batch.js';

// A conversation stored whole on SQLite (an import of up to MAX_IMPORT_MESSAGES messages, a /v1
// transcript) without holding the event loop. One that fits in ONE_COMMIT_ROWS messages (a /v1
// transcript, most imports) is a single write of the group commit (sqlite-write-batch.ts): a few
// milliseconds at most. A longer one is written by a thread of its own (sqlite-import-thread.ts)
// in short steps, each its own commit: under a hostile mix on two cores the rows of an import,
// with the search index's triggers (~50 µs a message), were the largest share of what held the
// loop, even in 6 ms steps. No transaction spans the steps: it would hold SQLite's write lock
// across them, which every other writer would wait for. Instead the conversation is written under
// an owner no reader asks for, and the last step hands it to its owner in the same commit as its
// last messages: readers see it whole or not at all. A process that dies part way leaves only an
// unowned conversation, removed by a later import once it is ABANDONED_AFTER_MS old. Deletions
// remove their messages on the same thread.

/**
 * The owner of a conversation being written. Never a user's id: user ids are the built-in
 * `local`/`anonymous` or a token's `sub`, which is at most 255 characters (verify-access-token.ts).
 */
export const IMPORTING_OWNER = 'import under way: not a user '.padEnd(300, '-');

/** Messages written in one write of the group commit (~3 ms with the search index) instead of by the thread. */
const ONE_COMMIT_ROWS = 64;
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
    // Found through the ("ownerId", "lastModified") index.
    abandoned: db.prepare<[string, string], { id: string; nextSeq: number }>(
      `SELECT id, "nextSeq" FROM "Conversation" WHERE "ownerId" = ? AND "lastModified" < ? LIMIT 1`,
    ),
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
  private readonly thread: SqliteImportThread;

  /** `path`: the database file of `db`, which the thread opens too. */
  constructor(
    db: Database.Database,
    path: string,
    private readonly writes: SqliteWriteBatch,
  ) {
    this.statements = prepareStatements(db);
    this.thread = new SqliteImportThread(path, IMPORTING_OWNER);
  }

  async insert(conversation: WholeConversation): Promise<void> {
    const now = new Date();
    await this.sweep(timestamp(new Date(now.getTime() - ABANDONED_AFTER_MS)));
    const at = timestamp(now);
    if (conversation.messages.length > ONE_COMMIT_ROWS) {
      await this.thread.insert(conversation, at);
      return;
    }
    await this.writes.run(() => {
      const { messages } = conversation;
      this.statements.head.run(conversation.id, conversation.ownerId, conversation.title, conversation.metadata, conversation.messageCount, messages.length, at, at);
      messages.forEach((message, seq) => {
        this.statements.message.run(newId(), conversation.id, seq, message.role, message.content, message.toolCalls, at);
      });
    });
  }

  /**
   * Deletes a conversation of `ownerId` without holding the event loop: one commit takes it from
   * its owner (no reader finds it from then on, and it is nobody's current conversation), then the
   * thread removes its messages in steps. A crash part way leaves an unowned conversation, which
   * the next import's sweep removes. False when it was not the owner's.
   */
  async delete(ownerId: string, id: string): Promise<boolean> {
    const hidden = await this.writes.run(() => {
      const row = this.statements.hide.get(IMPORTING_OWNER, timestamp(new Date(0)), id, ownerId);
      if (row) this.statements.forgetCurrent.run(id);
      return row;
    });
    if (!hidden) return false;
    await this.thread.remove(id, hidden.nextSeq);
    return true;
  }

  /** Stops the thread; call before the database closes. */
  close(): Promise<void> {
    return this.thread.stop();
  }

  /** Removes the unowned conversations of imports that died with their process. */
  private async sweep(before: string): Promise<void> {
    for (;;) {
      const left = await this.writes.run(() => this.statements.abandoned.get(IMPORTING_OWNER, before));
      if (!left) return;
      await this.thread.remove(left.id, left.nextSeq);
    }
  }
}
