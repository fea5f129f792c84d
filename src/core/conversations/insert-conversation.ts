import type { Prisma } from '../../generated/sqlite/client.js';
import type { ConversationHead } from '../chat-store/chat-store.js';
import type { StoredToolCall } from '../chat/history-window.js';
import type { Store } from '../db/store.js';
import { newId } from '../ids.js';
import { countsTowardMessageCount, defaultTitle, type MessageRole } from './conversation-views.js';

/** One message of a conversation that arrives whole, as it is stored. */
export interface IncomingMessage {
  role: MessageRole;
  content: string;
  /** An assistant's calls with their results, as the engine stores its own. */
  toolCalls?: StoredToolCall[] | undefined;
}

export interface NewConversation {
  ownerId: string;
  /** Without one, the first user message's first line (as every conversation is titled). */
  title?: string | undefined;
  metadata: Prisma.InputJsonObject;
  messages: readonly IncomingMessage[];
}

/**
 * Stores a new conversation together with all its messages, in one transaction: an import or a
 * stateless API request is stored whole or not at all. It does not become anyone's current
 * conversation; callers that want that say so themselves.
 */
export async function insertConversationWithMessages(store: Store, conversation: NewConversation): Promise<ConversationHead> {
  const id = newId();
  const now = new Date();
  const title = conversation.title ?? defaultTitle(conversation.messages);
  const messageCount = conversation.messages.filter((message) => countsTowardMessageCount(message.role)).length;
  const messages: Prisma.MessageCreateManyInput[] = conversation.messages.map((message, seq) => ({
    id: newId(),
    conversationId: id,
    seq,
    role: message.role,
    content: message.content,
    // As JSON text parsed back: the calls' params and results are JSON values already, and this
    // is how the chat store writes them too (stored-values.ts).
    ...(message.toolCalls && message.toolCalls.length > 0 ? { toolCalls: JSON.parse(JSON.stringify(message.toolCalls)) as Prisma.InputJsonArray } : {}),
    createdAt: now,
  }));
  await store.db.$transaction([
    store.db.conversation.create({
      data: {
        id,
        ownerId: conversation.ownerId,
        title,
        metadata: conversation.metadata,
        messageCount,
        nextSeq: messages.length,
        createdAt: now,
        lastModified: now,
      },
    }),
    store.db.message.createMany({ data: messages }),
  ]);
  return { id, ownerId: conversation.ownerId, title, messageCount };
}
