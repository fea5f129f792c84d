import type pg from 'pg';
import { isPostgresUnavailable } from '../db/database-unavailable.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';
import {
  DEFAULT_MODEL_KEY,
  type AnswerSnapshot,
  type AnswerTarget,
  type ChatSetup,
  type ChatStore,
  type ContextParts,
  type FinalAnswer,
  type HistoryMessage,
  type NewQuestion,
  type RecordedQuestion,
  type SetupQuery,
  type StoredAnswer,
  type WholeConversation,
} from './chat-store.js';
import { PostgresWholeConversation } from './postgres-whole-conversation.js';
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

// The chat store on PostgreSQL, on the pool Prisma's adapter uses too. Each operation is one
// statement (writes chained with data-modifying CTEs, so they are atomic and one round trip), sent
// as a named prepared statement that each pooled connection parses once. Timestamps go in as UTC
// ISO strings cast to `timestamp(3)`, as Prisma writes its DateTime columns.

const conversationJson = (alias: string) =>
  `json_build_object('id', ${alias}.id, 'ownerId', ${alias}."ownerId", 'title', ${alias}.title, 'messageCount', ${alias}."messageCount")`;
const workspaceJson = `json_build_object('id', w.id, 'name', w.name, 'path', w.path, 'branch', w.branch, 'status', w.status, 'device', w.device, 'inode', w.inode, 'gitEntries', w."gitEntries")`;

/** The active workspace (the chosen one, else the first registered) of the user whose state is in `state`. */
const activeWorkspace = `COALESCE(
    (SELECT ${workspaceJson} FROM "Workspace" w WHERE w.id = (SELECT "activeWorkspaceId" FROM state)),
    (SELECT ${workspaceJson} FROM "Workspace" w ORDER BY w."createdAt", w.id LIMIT 1))`;
/** The user's own active model (in `state`), else the service default (CONTRACT §12). */
const activeModel = `COALESCE((SELECT "activeModel" FROM state), (SELECT value FROM "Setting" WHERE key = '${DEFAULT_MODEL_KEY}'))`;

const readSetupSql = `
WITH state AS (SELECT "currentConversationId", "activeWorkspaceId", "activeModel" FROM "UserState" WHERE "userId" = $1::text)
SELECT
  (SELECT ${conversationJson('c')} FROM "Conversation" c
    WHERE c.id = COALESCE($2::text, (SELECT "currentConversationId" FROM state))) AS conversation,
  ${activeModel} AS "activeModel",
  (SELECT sections FROM "PromptOrder"
    WHERE CASE WHEN $3::text IS NULL THEN "isDefault" ELSE id = $3::text END
    ORDER BY "createdAt", id LIMIT 1) AS sections,
  ${activeWorkspace} AS workspace`;

/**
 * The question, counted on `counted` (an existing conversation) or `counted` as just made.
 *
 * The history is read from the last 2 × limit seqs first (`near`), and from the whole conversation
 * (`far`) only when deleted or superseded messages left that window short. One ordered query
 * would do, but its plan rests on the table's statistics: with none (a new database, autovacuum
 * off) PostgreSQL reckoned the conversation a few rows and fetched and sorted all of them at each
 * question, 1–2 ms at 2,700 messages and growing with the conversation.
 *
 * The conversation becomes the user's current one without touching the user's row when it is
 * current already (the usual case: a user goes on in one conversation). An upsert locks that row
 * even when it changes nothing, until the commit's WAL flush: a user's exchanges, in one
 * conversation or in several, queued on it one commit after another. The plain UPDATE takes no
 * lock where its WHERE finds nothing to change (and one racing it that does change the row is
 * re-checked once it commits). The INSERT covers the user's first question: it is tried only when
 * the statement's snapshot holds no row, so exactly one of the two writes. Its upsert still locks
 * the row when another transaction made it after that snapshot (a workspace or model switch, or
 * the user's other first question): there the UPDATE cannot see the row, and DO NOTHING would
 * have left no conversation current at all, in neither order of the two.
 */
const questionTail = `
, question AS (
  INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt")
  SELECT $5::text, id, seq, 'user', $6::text, false, $3::timestamp(3) FROM counted
), first_state AS (
  INSERT INTO "UserState" ("userId", "currentConversationId", "updatedAt")
  SELECT $2::text, id, $3::timestamp(3) FROM counted
  WHERE NOT EXISTS (SELECT 1 FROM "UserState" WHERE "userId" = $2::text)
  ON CONFLICT ("userId") DO UPDATE
  SET "currentConversationId" = excluded."currentConversationId", "updatedAt" = excluded."updatedAt"
), current AS (
  UPDATE "UserState" SET "currentConversationId" = (SELECT id FROM counted), "updatedAt" = $3::timestamp(3)
  WHERE "userId" = $2::text AND "currentConversationId" IS DISTINCT FROM (SELECT id FROM counted)
), near AS (
  SELECT seq, role, content, "toolCalls" FROM "Message"
  WHERE "conversationId" = (SELECT id FROM counted) AND seq < (SELECT seq FROM counted)
    AND seq >= (SELECT seq FROM counted) - 2 * $7::int AND "supersededBy" IS NULL
  ORDER BY seq DESC LIMIT $7::int
), far AS (
  SELECT seq, role, content, "toolCalls" FROM "Message"
  WHERE (SELECT count(*) FROM near) < $7::int AND (SELECT seq FROM counted) > 2 * $7::int
    AND "conversationId" = (SELECT id FROM counted) AND seq < (SELECT seq FROM counted) AND "supersededBy" IS NULL
  ORDER BY seq DESC LIMIT $7::int
)
SELECT ${conversationJson('counted')} AS conversation,
  (SELECT COALESCE(json_agg(h ORDER BY h.seq), '[]') FROM (
    SELECT * FROM far UNION ALL SELECT * FROM near WHERE NOT EXISTS (SELECT 1 FROM far)) h) AS history
FROM counted`;

// Every statement of one operation sees the same snapshot, so the history read beside the insert
// cannot see the question itself.
const questionInExistingSql = `
WITH counted AS (
  UPDATE "Conversation"
  SET "nextSeq" = "nextSeq" + 1, "messageCount" = "messageCount" + 1, "lastModified" = $3::timestamp(3),
      title = CASE WHEN title = '' THEN $4::text ELSE title END
  WHERE id = $1::text
  RETURNING id, "ownerId", title, "messageCount", "nextSeq" - 1 AS seq
)${questionTail}`;

const questionInNewSql = `
WITH counted AS (
  INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified")
  VALUES ($1::text, $2::text, $4::text, 1, 1, $3::timestamp(3), $3::timestamp(3))
  RETURNING id, "ownerId", title, "messageCount", 0 AS seq
)${questionTail}`;

const openAnswerSql = `
WITH counted AS (
  UPDATE "Conversation"
  SET "nextSeq" = "nextSeq" + 1, "messageCount" = "messageCount" + 1, "lastModified" = $2::timestamp(3)
  WHERE id = $1::text RETURNING id, "nextSeq" - 1 AS seq
)
INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", model, provider, streaming, writer, "createdAt")
SELECT $3::text, id, seq, 'assistant', $6::text, $7::jsonb, $4::text, $5::text, true, $8::text, $2::timestamp(3) FROM counted
RETURNING id`;

const saveAnswerSql = `UPDATE "Message" SET content = $2::text, "toolCalls" = $3::jsonb WHERE id = $1::text`;

const contextColumns = (conversation: string) => `
SELECT ${conversation} AS conversation, ${activeModel} AS "activeModel", ${activeWorkspace} AS workspace`;

// The conversation's metadata is a free object given at import (CONTRACT §3): the answer's names
// are merged in; anything that is not an object is replaced.
const closeAnswerSql = `
WITH closed AS (
  UPDATE "Message"
  SET content = $2::text, "toolCalls" = $3::jsonb, "finishReason" = $4::text, usage = $5::jsonb, streaming = false
  WHERE id = $1::text
), noted AS (
  UPDATE "Conversation"
  SET metadata = CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}'::jsonb END || $6::jsonb,
      "lastModified" = $7::timestamp(3)
  WHERE id = $8::text RETURNING id, "ownerId", title, "messageCount"
), state AS (SELECT "activeWorkspaceId", "activeModel" FROM "UserState" WHERE "userId" = $9::text)
${contextColumns(`(SELECT ${conversationJson('noted')} FROM noted)`)}`;

// An answer that finished before it needed a row of its own (see AnswerWriter) is stored whole
// in one statement: counted, inserted, and noted on its conversation.
const storeAnswerSql = `
WITH noted AS (
  UPDATE "Conversation"
  SET "nextSeq" = "nextSeq" + 1, "messageCount" = "messageCount" + 1,
      metadata = CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}'::jsonb END || $6::jsonb,
      "lastModified" = $7::timestamp(3)
  WHERE id = $8::text RETURNING id, "ownerId", title, "messageCount", "nextSeq" - 1 AS seq
), stored AS (
  INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", model, provider, "finishReason", usage, streaming, "createdAt")
  SELECT $1::text, id, seq, 'assistant', $2::text, $3::jsonb, $10::text, $11::text, $4::text, $5::jsonb, false, $7::timestamp(3) FROM noted
  RETURNING id
), state AS (SELECT "activeWorkspaceId", "activeModel" FROM "UserState" WHERE "userId" = $9::text)
${contextColumns(`(SELECT ${conversationJson('noted')} FROM noted)`)}, (SELECT id FROM stored) AS "messageId"`;

const readContextSql = `
WITH state AS (SELECT "activeWorkspaceId", "activeModel" FROM "UserState" WHERE "userId" = $1::text)
${contextColumns(`(SELECT ${conversationJson('c')} FROM "Conversation" c WHERE c.id = $2::text)`)}`;

interface ContextRow {
  conversation: ConversationRow | null;
  activeModel: unknown;
  workspace: WorkspaceRef | null;
}

function contextPartsOf(row: ContextRow | undefined): ContextParts {
  return {
    conversation: conversationHeadOf(row?.conversation),
    workspace: workspaceRefOf(row?.workspace),
    activeModel: activeModelOf(row?.activeModel),
  };
}

const deleteConversationSql = `
WITH gone AS (DELETE FROM "Conversation" WHERE id = $1::text AND "ownerId" = $2::text RETURNING id),
     cleared AS (UPDATE "UserState" SET "currentConversationId" = NULL WHERE "currentConversationId" IN (SELECT id FROM gone) RETURNING 1)
SELECT count(*)::int AS deleted FROM gone`;

export class PostgresChatStore implements ChatStore {
  private readonly wholeConversations: PostgresWholeConversation;

  /** `writer`: this instance, recorded on the answers it generates (see closeInterruptedAnswers). */
  constructor(
    private readonly pool: pg.Pool,
    private readonly writer: string,
  ) {
    this.wholeConversations = new PostgresWholeConversation(pool);
  }

  insertConversation(conversation: WholeConversation): Promise<void> {
    return this.wholeConversations.insert(conversation);
  }

  /** One statement: the server does the work (messages by cascade) while the event loop serves others. */
  async deleteConversation(ownerId: string, id: string): Promise<boolean> {
    const row = await this.one<{ deleted: number }>('chat.deleteConversation', deleteConversationSql, [id, ownerId]);
    return (row?.deleted ?? 0) > 0;
  }

  async readSetup(query: SetupQuery): Promise<ChatSetup> {
    const row = await this.one<ContextRow & { sections: unknown }>('chat.readSetup', readSetupSql, [
      query.userId,
      query.conversationId ?? null,
      query.promptOrderId ?? null,
    ]);
    return { ...contextPartsOf(row), promptSections: promptSectionsOf(row?.sections) };
  }

  async recordQuestion(question: NewQuestion): Promise<RecordedQuestion | null> {
    const inNew = question.conversationId === null;
    const row = await this.one<{ conversation: ConversationRow; history: HistoryMessage[] }>(
      inNew ? 'chat.questionInNew' : 'chat.questionInExisting',
      inNew ? questionInNewSql : questionInExistingSql,
      [question.conversationId ?? newId(), question.userId, new Date().toISOString(), question.defaultTitle, question.id ?? newId(), question.content, question.historyLimit],
    );
    const conversation = conversationHeadOf(row?.conversation);
    if (!row || !conversation) return null;
    const history = row.history.map((message) => ({ role: message.role, content: message.content, toolCalls: toolCallsOf(message.toolCalls) }));
    return { conversation, history };
  }

  async openAnswer(conversationId: string, target: AnswerTarget, snapshot: AnswerSnapshot, id = newId()): Promise<string | null> {
    const row = await this.one<{ id: string }>('chat.openAnswer', openAnswerSql, [
      conversationId,
      new Date().toISOString(),
      id,
      target.model,
      target.provider,
      snapshot.content,
      storedToolCalls(snapshot.toolCalls),
      this.writer,
    ]);
    return row?.id ?? null;
  }

  async saveAnswer(messageId: string, snapshot: AnswerSnapshot): Promise<void> {
    await this.one('chat.saveAnswer', saveAnswerSql, [messageId, snapshot.content, storedToolCalls(snapshot.toolCalls)]);
  }

  async closeAnswer(
    messageId: string | null,
    conversationId: string,
    userId: string,
    answer: FinalAnswer,
    target: AnswerTarget,
    newAnswerId = newId(),
  ): Promise<StoredAnswer> {
    const values = [
      messageId ?? newAnswerId,
      answer.content,
      storedToolCalls(answer.toolCalls),
      answer.finishReason,
      JSON.stringify(answer.usage),
      answerMetadata(target),
      new Date().toISOString(),
      conversationId,
      userId,
    ];
    if (messageId !== null) {
      return { messageId, context: contextPartsOf(await this.one<ContextRow>('chat.closeAnswer', closeAnswerSql, values)) };
    }
    const row = await this.one<ContextRow & { messageId: string | null }>('chat.storeAnswer', storeAnswerSql, [...values, target.model, target.provider]);
    return { messageId: row?.messageId ?? null, context: contextPartsOf(row) };
  }

  async readContext(userId: string, conversationId: string): Promise<ContextParts> {
    return contextPartsOf(await this.one<ContextRow>('chat.readContext', readContextSql, [userId, conversationId]));
  }

  /** The pool belongs to the database (create-db.ts), which ends it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** The first row of a named statement; a server that cannot be used is SERVICE_UNAVAILABLE (503). */
  private async one<Row extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<Row | undefined> {
    try {
      const result = await this.pool.query<Row>({ name, text, values });
      return result.rows[0];
    } catch (error) {
      if (isPostgresUnavailable(error)) throw new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', { cause: error });
      throw error;
    }
  }
}
