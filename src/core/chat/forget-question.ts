import type { Store } from '../db/store.js';

export interface StoredQuestion {
  userId: string;
  conversationId: string;
  /** The question's message: with others arriving in the same conversation, the last one may not be it. */
  questionId: string;
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
  // Another request may have joined the conversation this question made: then only the question goes.
  const others = await store.db.message.count({ where: { conversationId: question.conversationId, id: { not: question.questionId } } });
  if (question.madeConversation && others === 0) {
    // Taking back twice (a quota's refusal, then an Idempotency-Key's retry) finds it gone: done.
    await store.chat.deleteConversation(question.userId, question.conversationId);
    return;
  }
  await store.db.$transaction(async (tx) => {
    const { count } = await tx.message.deleteMany({ where: { id: question.questionId, conversationId: question.conversationId, role: 'user' } });
    if (count === 0) return;
    await tx.conversation.update({
      where: { id: question.conversationId },
      data: { messageCount: { decrement: 1 }, ...(question.tookTitle ? { title: '' } : {}) },
    });
  });
}
