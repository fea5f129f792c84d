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
 * Stores a new conversation together with all its messages: an import or a stateless API request
 * is stored whole or not at all, and no reader sees it before it is whole. The chat store writes
 * it in steps that leave the event loop free between them (an import of thousands of messages
 * once held it for seconds through Prisma). It does not become anyone's current conversation;
 * callers that want that say so themselves.
 */
export async function insertConversationWithMessages(store: Store, conversation: NewConversation): Promise<ConversationHead> {
  const id = newId();
  const title = conversation.title ?? defaultTitle(conversation.messages);
  let messageCount = 0;
  const messages = conversation.messages.map((message) => {
    if (countsTowardMessageCount(message.role)) messageCount++;
    // JSON text, as the chat store writes an answer's calls (stored-values.ts).
    const toolCalls = message.toolCalls && message.toolCalls.length > 0 ? JSON.stringify(message.toolCalls) : null;
    return { role: message.role, content: message.content, toolCalls };
  });
  await store.chat.insertConversation({
    id,
    ownerId: conversation.ownerId,
    title,
    metadata: JSON.stringify(conversation.metadata),
    messageCount,
    messages,
  });
  return { id, ownerId: conversation.ownerId, title, messageCount };
}
