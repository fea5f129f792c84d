import Database from 'better-sqlite3';
import { newId } from '../ids.js';
import type { ActiveModel } from '../models/active-model.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';
import {
  DEFAULT_MODEL_KEY,
  type AnswerSnapshot,
  type AnswerTarget,
  type ChatSetup,
  type ChatStore,
  type ContextParts,
  type ConversationHead,
  type FinalAnswer,
  type HistoryMessage,
  type NewQuestion,
  type RecordedQuestion,
  type SetupQuery,
  type StoredAnswer,
  type WholeConversation,
} from './chat-store.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { SqliteSearchIndexer } from './sqlite-search-indexer.js';
import { SqliteWholeConversation } from './sqlite-whole-conversation.js';
import { SqliteWriteBatch } from './sqlite-write-batch.js';
import {
  activeModelOf,
  answerMetadata,
  conversationHeadOf,
  promptSectionsOf,
  storedToolCalls,
  toolCallsOf,
  workspaceRefOf,
  type ConversationRow,
} from './stored-values.js';

// The chat store on SQLite: a connection of its own to the service's database file, beside
// Prisma's, with every statement prepared once. Writes are group-committed (sqlite-write-batch.ts),
// each transaction begun and committed within one synchronous call, so it never spans an
// event-loop turn and Prisma's connection never waits on ours. The other way round, Prisma may hold
// the write lock across turns (its interactive transactions): with no busy timeout here, ours
// fails at once and is retried between turns instead of blocking the loop Prisma needs to finish.

/** As Prisma's better-sqlite3 adapter writes DateTime (its default `iso8601` format), so text order is time order. */
function timestamp(date = new Date()): string {
  return date.toISOString().replace('Z', '+00:00');
}

/** The columns a question leaves empty. */
const noAnswerColumns = { toolCalls: null, model: null, provider: null, finishReason: null, usage: null, writer: null };

const conversationColumns = `id, "ownerId", title, "messageCount"`;
const workspaceColumns = `id, name, path, branch, status, device, inode, "gitEntries"`;

/** A Message row as Prisma stores it on SQLite (JSON as text, booleans as 0/1). */
interface MessageRow {
  id: string;
  conversationId: string;
  seq: number;
  role: string;
  content: string;
  toolCalls: string | null;
  model: string | null;
  provider: string | null;
  finishReason: string | null;
  usage: string | null;
  streaming: 0 | 1;
  writer: string | null;
  createdAt: string;
}

interface StateRow {
  currentConversationId: string | null;
  activeWorkspaceId: string | null;
  activeModel: string | null;
}

function prepareStatements(db: Database.Database) {
  return {
    userState: db.prepare<[string], StateRow>(`SELECT "currentConversationId", "activeWorkspaceId", "activeModel" FROM "UserState" WHERE "userId" = ?`),
    conversation: db.prepare<[string], ConversationRow>(`SELECT ${conversationColumns} FROM "Conversation" WHERE id = ?`),
    setting: db.prepare<[string], { value: string }>(`SELECT value FROM "Setting" WHERE key = ?`),
    promptOrder: db.prepare<[string], { sections: string }>(`SELECT sections FROM "PromptOrder" WHERE id = ?`),
    defaultPromptOrder: db.prepare<[], { sections: string }>(
      `SELECT sections FROM "PromptOrder" WHERE "isDefault" = 1 ORDER BY "createdAt", id LIMIT 1`,
    ),
    workspace: db.prepare<[string], WorkspaceRef>(`SELECT ${workspaceColumns} FROM "Workspace" WHERE id = ?`),
    firstWorkspace: db.prepare<[], WorkspaceRef>(`SELECT ${workspaceColumns} FROM "Workspace" ORDER BY "createdAt", id LIMIT 1`),
    newConversation: db.prepare<[string, string, string, string, string]>(
      `INSERT INTO "Conversation" (id, "ownerId", title, metadata, "messageCount", "nextSeq", "createdAt", "lastModified")
       VALUES (?, ?, ?, NULL, 1, 1, ?, ?)`,
    ),
    countQuestion: db.prepare<[string, string, string], ConversationRow & { seq: number }>(
      `UPDATE "Conversation"
       SET "nextSeq" = "nextSeq" + 1, "messageCount" = "messageCount" + 1, "lastModified" = ?,
           title = CASE WHEN title = '' THEN ? ELSE title END
       WHERE id = ? RETURNING ${conversationColumns}, "nextSeq" - 1 AS seq`,
    ),
    countAnswer: db.prepare<[string, string], { seq: number }>(
      `UPDATE "Conversation" SET "nextSeq" = "nextSeq" + 1, "messageCount" = "messageCount" + 1, "lastModified" = ?
       WHERE id = ? RETURNING "nextSeq" - 1 AS seq`,
    ),
    insertMessage: db.prepare<[MessageRow]>(
      `INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", model, provider, "finishReason", usage, streaming, writer, "createdAt")
       VALUES (@id, @conversationId, @seq, @role, @content, @toolCalls, @model, @provider, @finishReason, @usage, @streaming, @writer, @createdAt)`,
    ),
    // Left alone when the conversation is current already: no write of the user's row per question.
    makeCurrent: db.prepare<[string, string, string]>(
      `INSERT INTO "UserState" ("userId", "currentConversationId", "activeWorkspaceId", "updatedAt") VALUES (?, ?, NULL, ?)
       ON CONFLICT ("userId") DO UPDATE SET "currentConversationId" = excluded."currentConversationId", "updatedAt" = excluded."updatedAt"
       WHERE "currentConversationId" IS NOT excluded."currentConversationId"`,
    ),
    history: db.prepare<[string, number, number], HistoryMessage>(
      `SELECT role, content, "toolCalls" FROM "Message" WHERE "conversationId" = ? AND seq < ? AND "supersededBy" IS NULL ORDER BY seq DESC LIMIT ?`,
    ),
    saveAnswer: db.prepare<[string, string | null, string]>(`UPDATE "Message" SET content = ?, "toolCalls" = ? WHERE id = ?`),
    closeAnswer: db.prepare<[string, string | null, string, string, string]>(
      `UPDATE "Message" SET content = ?, "toolCalls" = ?, "finishReason" = ?, usage = ?, streaming = 0 WHERE id = ?`,
    ),
    // The conversation's metadata is a free object given at import (CONTRACT §3): the answer's
    // names are merged in; anything that is not an object is replaced.
    noteAnswer: db.prepare<[string, string, string], ConversationRow>(
      `UPDATE "Conversation"
       SET metadata = json_patch(CASE WHEN json_valid(metadata) AND json_type(metadata) = 'object' THEN metadata ELSE '{}' END, ?),
           "lastModified" = ?
       WHERE id = ? RETURNING ${conversationColumns}`,
    ),
  };
}

export class SqliteChatStore implements ChatStore {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly writes: SqliteWriteBatch;
  private readonly wholeConversations: SqliteWholeConversation;
  private readonly checkpointer: SqliteCheckpointer;
  private readonly indexer: SqliteSearchIndexer;

  /** `path` is the SQLite file Prisma uses; the schema must be migrated already. */
  /** `writer`: this instance, recorded on the answers it generates (see closeInterruptedAnswers). */
  constructor(
    path: string,
    private readonly writer: string,
  ) {
    // No busy timeout: SQLite's would wait inside this thread, see the top of this file.
    this.db = new Database(path, { timeout: 0 });
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.statements = prepareStatements(this.db);
    this.writes = new SqliteWriteBatch(this.db);
    this.wholeConversations = new SqliteWholeConversation(this.db, path, this.writes);
    this.checkpointer = new SqliteCheckpointer(path, this.db);
    this.indexer = new SqliteSearchIndexer(this.db, this.writes);
  }

  readSetup(query: SetupQuery): Promise<ChatSetup> {
    return retryWhileBusy(() => {
      const s = this.statements;
      const state = s.userState.get(query.userId);
      const conversationId = query.conversationId ?? state?.currentConversationId ?? null;
      const order = query.promptOrderId === undefined ? s.defaultPromptOrder.get() : s.promptOrder.get(query.promptOrderId);
      return {
        conversation: conversationId === null ? null : conversationHeadOf(s.conversation.get(conversationId)),
        activeModel: this.activeModel(state),
        promptSections: promptSectionsOf(order?.sections),
        workspace: this.activeWorkspace(state),
      };
    });
  }

  async insertConversation(conversation: WholeConversation): Promise<void> {
    await this.wholeConversations.insert(conversation);
    this.indexer.queued();
  }

  deleteConversation(ownerId: string, id: string): Promise<boolean> {
    return this.wholeConversations.delete(ownerId, id);
  }

  recordQuestion(question: NewQuestion): Promise<RecordedQuestion | null> {
    // The question's row is queued for the search index (sqlite-search-indexer.ts).
    this.indexer.queued();
    return this.writes.run(() => this.storeQuestion(question));
  }

  openAnswer(conversationId: string, target: AnswerTarget, snapshot: AnswerSnapshot, id = newId()): Promise<string | null> {
    return this.writes.run(() => this.insertAnswer(conversationId, target, snapshot, null, id));
  }

  async saveAnswer(messageId: string, snapshot: AnswerSnapshot): Promise<void> {
    await this.writes.run(() => this.statements.saveAnswer.run(snapshot.content, storedToolCalls(snapshot.toolCalls), messageId));
  }

  async closeAnswer(
    messageId: string | null,
    conversationId: string,
    userId: string,
    answer: FinalAnswer,
    target: AnswerTarget,
    newAnswerId = newId(),
  ): Promise<StoredAnswer> {
    this.indexer.queued();
    const stored = await this.writes.run(() => {
      const s = this.statements;
      let id = messageId;
      if (id === null) id = this.insertAnswer(conversationId, target, answer, answer, newAnswerId);
      else s.closeAnswer.run(answer.content, storedToolCalls(answer.toolCalls), answer.finishReason, JSON.stringify(answer.usage), id);
      return { id, conversation: s.noteAnswer.get(answerMetadata(target), timestamp(), conversationId) };
    });
    const context = await retryWhileBusy(() => this.contextParts(userId, conversationHeadOf(stored.conversation)));
    return { messageId: stored.id, context };
  }

  readContext(userId: string, conversationId: string): Promise<ContextParts> {
    return retryWhileBusy(() => this.contextParts(userId, conversationHeadOf(this.statements.conversation.get(conversationId))));
  }

  async close(): Promise<void> {
    await this.indexer.stop();
    await this.wholeConversations.close();
    await this.checkpointer.stop();
    this.db.close();
  }

  private storeQuestion(question: NewQuestion): RecordedQuestion | null {
    const s = this.statements;
    const now = timestamp();
    let conversation: ConversationHead;
    let seq: number;
    if (question.conversationId === null) {
      conversation = { id: newId(), ownerId: question.userId, title: question.defaultTitle, messageCount: 1 };
      s.newConversation.run(conversation.id, conversation.ownerId, conversation.title, now, now);
      seq = 0;
    } else {
      const row = s.countQuestion.get(now, question.defaultTitle, question.conversationId);
      const head = conversationHeadOf(row);
      if (!row || !head) return null;
      conversation = head;
      seq = row.seq;
    }
    s.insertMessage.run({
      ...noAnswerColumns,
      id: question.id ?? newId(),
      conversationId: conversation.id,
      seq,
      role: 'user',
      content: question.content,
      streaming: 0,
      createdAt: now,
    });
    s.makeCurrent.run(question.userId, conversation.id, now);
    const history = s.history
      .all(conversation.id, seq, question.historyLimit)
      .reverse()
      .map((row) => ({ role: row.role, content: row.content, toolCalls: toolCallsOf(row.toolCalls) }));
    return { conversation, history };
  }

  /** An answer's row: still streaming (`final` null) or whole. Null when the conversation has gone. */
  private insertAnswer(conversationId: string, target: AnswerTarget, snapshot: AnswerSnapshot, final: FinalAnswer | null, id: string): string | null {
    const now = timestamp();
    const row = this.statements.countAnswer.get(now, conversationId);
    if (!row) return null;
    this.statements.insertMessage.run({
      id,
      conversationId,
      seq: row.seq,
      role: 'assistant',
      content: snapshot.content,
      toolCalls: storedToolCalls(snapshot.toolCalls),
      model: target.model,
      provider: target.provider,
      finishReason: final?.finishReason ?? null,
      usage: final ? JSON.stringify(final.usage) : null,
      streaming: final ? 0 : 1,
      writer: final ? null : this.writer,
      createdAt: now,
    });
    return id;
  }

  private contextParts(userId: string, conversation: ConversationHead | null): ContextParts {
    const state = this.statements.userState.get(userId);
    return { conversation, workspace: this.activeWorkspace(state), activeModel: this.activeModel(state) };
  }

  /** The user's own active model, else the service default (CONTRACT §12). */
  private activeModel(state: StateRow | undefined): ActiveModel | null {
    return activeModelOf(state?.activeModel) ?? activeModelOf(this.statements.setting.get(DEFAULT_MODEL_KEY)?.value);
  }

  private activeWorkspace(state: StateRow | undefined): WorkspaceRef | null {
    const chosen = state?.activeWorkspaceId ? this.statements.workspace.get(state.activeWorkspaceId) : undefined;
    return workspaceRefOf(chosen ?? this.statements.firstWorkspace.get());
  }
}
