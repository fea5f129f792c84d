import type { Prisma } from '../../generated/sqlite/client.js';
import type { ConversationHead } from '../chat-store/chat-store.js';
import type { StoredToolCall } from '../chat/history-window.js';
import type { Store } from '../db/store.js';
import { newId } from '../ids.js';
import { countsTowardMessageCount, defaultTitle } from './conversation-views.js';

/** One message of a conversation a caller sent whole, as it is stored. */
export interface TranscriptRow {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** An assistant's calls, with the results the caller sent for them (as the engine stores its own). */
  toolCalls?: StoredToolCall[];
}

/**
 * Stores a conversation a caller sent whole (the OpenAI-compatible path is stateless: each
 * request carries every message) as a new conversation of `userId`, in one transaction, before
 * the model is called; the answer is appended to it like any other. It does not become the
 * caller's current conversation: an API client calling now and then must not take the web
 * interface's conversation away from its user.
 */
export async function recordTranscript(store: Store, userId: string, rows: readonly TranscriptRow[]): Promise<ConversationHead> {
  const id = newId();
  const now = new Date();
  const title = defaultTitle(rows);
  const messageCount = rows.filter((row) => countsTowardMessageCount(row.role)).length;
  const messages: Prisma.MessageCreateManyInput[] = rows.map((row, seq) => ({
    id: newId(),
    conversationId: id,
    seq,
    role: row.role,
    content: row.content,
    // As JSON text parsed back: the calls' params and results are JSON values already, and this
    // is how the chat store writes them too (stored-values.ts).
    ...(row.toolCalls && row.toolCalls.length > 0 ? { toolCalls: JSON.parse(JSON.stringify(row.toolCalls)) as Prisma.InputJsonArray } : {}),
    createdAt: now,
  }));
  await store.db.$transaction([
    store.db.conversation.create({
      data: {
        id,
        ownerId: userId,
        title,
        metadata: { source: 'openai-compatible' },
        messageCount,
        nextSeq: messages.length,
        createdAt: now,
        lastModified: now,
      },
    }),
    store.db.message.createMany({ data: messages }),
  ]);
  return { id, ownerId: userId, title, messageCount };
}
