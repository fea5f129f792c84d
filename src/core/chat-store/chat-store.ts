import type { ActiveModel } from '../models/active-model.js';
import type { PromptSection } from '../prompt-orders/prompt-order-schema.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';

// The chat engine's storage: every read and write an exchange makes, as a few prepared statements
// on the database driver itself. Prisma stays the schema, the migrations and every other query;
// through it an exchange cost about 20 queries of ~0.7 ms CPU each, more than the whole budget
// (BENCHMARKS.md, "Chat"). One implementation per database (sqlite-chat-store.ts,
// postgres-chat-store.ts) writes rows exactly as Prisma does, so Prisma reads them back unchanged.

/** What the engine needs to know of a conversation. */
export interface ConversationHead {
  id: string;
  ownerId: string;
  title: string;
  messageCount: number;
}

/** A stored message as the history window reads it. */
export interface HistoryMessage {
  role: string;
  content: string;
  /** The stored `toolCalls` JSON (an array of StoredToolCall), or null. */
  toolCalls: unknown;
}

/** Everything a chat request reads before it is checked, in one go. */
export interface ChatSetup {
  /**
   * The conversation named by id, or else the caller's current one; null when there is none. It
   * may belong to another user: the caller decides (404 for a named one, a new current one else).
   */
  conversation: ConversationHead | null;
  /** The caller's own active model, else the stored service default; null before either was stored. */
  activeModel: ActiveModel | null;
  /** The sections of the prompt order named by id, else of the stored default; null when there is none. */
  promptSections: PromptSection[] | null;
  /** The caller's active workspace: the chosen one, else the first registered (CONTRACT §5). */
  workspace: WorkspaceRef | null;
}

export interface SetupQuery {
  userId: string;
  conversationId?: string | undefined;
  promptOrderId?: string | undefined;
}

export interface NewQuestion {
  userId: string;
  /** An existing conversation of the caller, or null to start a new one (it becomes current too). */
  conversationId: string | null;
  content: string;
  /** The title an untitled conversation takes (CONTRACT §3's default title). */
  defaultTitle: string;
  /** MAX_CONVERSATION_HISTORY: how many earlier messages come back. */
  historyLimit: number;
  /** The question's message id, chosen by the caller so it can take this very message back. */
  id?: string;
}

export interface RecordedQuestion {
  conversation: ConversationHead;
  /** The last `historyLimit` messages before the question, oldest first. */
  history: HistoryMessage[];
}

export interface AnswerTarget {
  provider: string;
  model: string;
}

export interface AnswerSnapshot {
  content: string;
  /** Stored as the message's `toolCalls`; none is stored as null. */
  toolCalls: readonly unknown[];
}

export interface FinalAnswer extends AnswerSnapshot {
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** CONTRACT §3's context object, without the model's fallback applied. */
export interface ContextParts {
  conversation: ConversationHead | null;
  workspace: WorkspaceRef | null;
  activeModel: ActiveModel | null;
}

export interface StoredAnswer {
  /** Null when the conversation was deleted while the answer was being generated. */
  messageId: string | null;
  /** What the context_update that follows shows. */
  context: ContextParts;
}

/** One message of a conversation stored whole (an import, a stateless API request). */
export interface WholeMessage {
  role: string;
  content: string;
  /** The `toolCalls` column as JSON text, or null. */
  toolCalls: string | null;
}

/** A conversation that arrives with all its messages; it becomes visible only once all are stored. */
export interface WholeConversation {
  id: string;
  ownerId: string;
  title: string;
  /** The `metadata` column as JSON text. */
  metadata: string;
  messageCount: number;
  messages: readonly WholeMessage[];
}

export interface ChatStore {
  readSetup(query: SetupQuery): Promise<ChatSetup>;
  /**
   * Stores a new conversation with all its messages, written in steps that each leave the event
   * loop free between them; no reader sees it until every message is stored, and a failure (or a
   * crash) part way leaves nothing visible. It does not become anyone's current conversation.
   */
  insertConversation(conversation: WholeConversation): Promise<void>;
  /**
   * Deletes a conversation of `ownerId` and its messages, and clears it as anyone's current one:
   * readers see it whole or gone, and a long one does not hold the event loop. False when no such
   * conversation of that owner exists.
   */
  deleteConversation(ownerId: string, id: string): Promise<boolean>;
  /**
   * Stores the user's message (before the model is called, CONTRACT §7) in one transaction: the
   * conversation (made when `conversationId` is null) counts it and takes the default title if it
   * has none, and becomes the user's current one. Null when the conversation has gone meanwhile.
   */
  recordQuestion(question: NewQuestion): Promise<RecordedQuestion | null>;
  /**
   * Makes the row of an answer still being generated, marked as streaming, with what it has so
   * far; null when the conversation has gone meanwhile. `id`, when given, is the row's id (a
   * regenerated answer's id was chosen when what it replaces was marked superseded).
   */
  openAnswer(conversationId: string, target: AnswerTarget, snapshot: AnswerSnapshot, id?: string): Promise<string | null>;
  /** Stores what the answer has so far; it stays marked as streaming. */
  saveAnswer(messageId: string, snapshot: AnswerSnapshot): Promise<void>;
  /**
   * Stores the whole answer, closing the row openAnswer made, or in a row of its own when it
   * finished before it needed one (`messageId` null); the conversation records the provider and
   * model of its last answer. `id` names that row of its own, as openAnswer's.
   */
  closeAnswer(
    messageId: string | null,
    conversationId: string,
    userId: string,
    answer: FinalAnswer,
    target: AnswerTarget,
    id?: string,
  ): Promise<StoredAnswer>;
  /** The parts of the context object for this user and conversation. */
  readContext(userId: string, conversationId: string): Promise<ContextParts>;
  close(): Promise<void>;
}

/**
 * The setting row that holds the service default model (see models/active-model.ts); a user's own
 * active model is UserState.activeModel (CONTRACT §12).
 */
export const DEFAULT_MODEL_KEY = 'defaultModel';
