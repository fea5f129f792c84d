import type { Store } from '../db/store.js';
import { deleteConversation } from '../conversations/delete-conversation.js';

export interface StoredQuestion {
  userId: string;
  conversationId: string;
  /** The question made the conversation: it goes with it. */
  madeConversation: boolean;
  /** The conversation had no title and took the question's default title. */
  tookTitle: boolean;
}

/**
 * Takes back a question whose generation failed before its provider answered (nothing after it
 * is stored then): the conversation it made, or else the message itself, with the count and the
 * default title it gave.
 */
export async function forgetQuestion(store: Store, question: StoredQuestion): Promise<void> {
  if (question.madeConversation) {
    await deleteConversation(store, question.userId, question.conversationId);
    return;
  }
  const last = await store.db.message.findFirst({
    where: { conversationId: question.conversationId },
    orderBy: { seq: 'desc' },
    select: { id: true, role: true },
  });
  if (last?.role !== 'user') return;
  await store.db.$transaction([
    store.db.message.delete({ where: { id: last.id } }),
    store.db.conversation.update({
      where: { id: question.conversationId },
      data: { messageCount: { decrement: 1 }, ...(question.tookTitle ? { title: '' } : {}) },
    }),
  ]);
}
