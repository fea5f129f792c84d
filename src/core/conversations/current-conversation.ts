import type { Conversation } from '../../generated/sqlite/client.js';
import type { StoredConversation } from '../chat-store/conversation-reads.js';
import { newId } from '../ids.js';
import type { Store } from '../db/store.js';
import { requireOwnConversation } from './find-conversation.js';

// One current conversation per user (CONTRACT §0), made on demand: by the first chat,
// context/clear, or a read of current/context (CONTRACT §7).

export async function findCurrentConversation(store: Store, userId: string): Promise<Conversation | null> {
  const state = await store.db.userState.findUnique({ where: { userId } });
  if (!state?.currentConversationId) return null;
  const conversation = await store.db.conversation.findUnique({ where: { id: state.currentConversationId } });
  return conversation?.ownerId === userId ? conversation : null;
}

export async function getOrCreateCurrentConversation(store: Store, userId: string): Promise<Conversation> {
  return (await findCurrentConversation(store, userId)) ?? startNewConversation(store, userId);
}

/** A new empty conversation that becomes current; the previous one stays saved. */
export async function startNewConversation(store: Store, userId: string): Promise<Conversation> {
  const now = new Date();
  const conversation = await store.db.conversation.create({
    data: { id: newId(), ownerId: userId, createdAt: now, lastModified: now },
  });
  await pointCurrentAt(store, userId, conversation.id);
  return conversation;
}

export async function setCurrentConversation(store: Store, userId: string, id: string): Promise<StoredConversation> {
  const conversation = await requireOwnConversation(store, userId, id);
  await pointCurrentAt(store, userId, conversation.id);
  return conversation;
}

async function pointCurrentAt(store: Store, userId: string, conversationId: string): Promise<void> {
  await store.db.userState.upsert({
    where: { userId },
    create: { userId, currentConversationId: conversationId },
    update: { currentConversationId: conversationId },
  });
}
