import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { ConversationHead, HistoryMessage } from './chat-store.js';
import { toolCallsOf } from './stored-values.js';

// CONTRACT §12, regenerate and edit-and-resend. Rare next to a plain question, so written with
// Prisma in one interactive transaction rather than on the hot path's driver statements; the hot
// path's history reads leave superseded messages out the same way.

/** `regenerate`: the last question answered again. `edit`: a question replaced, and all after it. */
export type TurnReplacement = { kind: 'regenerate' } | { kind: 'edit'; messageId: string; content: string };

export interface ReplacedTurn {
  conversation: ConversationHead;
  /** The last `historyLimit` messages still in force before the question, oldest first. */
  history: HistoryMessage[];
  /** The question the model answers: the stored one again, or the edited one. */
  question: string;
  /** The answer's id, chosen now: a regenerated answer is what the old one is superseded by. */
  answerId: string;
  /** What the replaced messages name as `supersededBy`. */
  supersededBy: string;
  /** The edited question's new row (edit only). */
  questionId: string | null;
}

export interface TurnQuery {
  userId: string;
  conversationId: string;
  replacement: TurnReplacement;
  historyLimit: number;
}

/**
 * Marks what is replaced as superseded (kept, listed, out of messageCount and of the model's
 * history), stores an edited question, makes the conversation current, and reads the history the
 * model is sent. Another user's or an unknown conversation is 404, as for any chat.
 */
export async function replaceTurn(store: Store, query: TurnQuery): Promise<ReplacedTurn> {
  const { replacement } = query;
  return store.db.$transaction(async (tx) => {
    const conversation = await tx.conversation.findUnique({
      where: { id: query.conversationId },
      select: { id: true, ownerId: true },
    });
    if (conversation?.ownerId !== query.userId) throw AppError.notFound('Conversation');
    const pivot =
      replacement.kind === 'regenerate'
        ? await tx.message.findFirst({ where: { conversationId: conversation.id, role: 'user', supersededBy: null }, orderBy: { seq: 'desc' } })
        : await tx.message.findFirst({ where: { id: replacement.messageId, conversationId: conversation.id } });
    if (replacement.kind === 'regenerate' && pivot === null) {
      throw AppError.invalid('This conversation has no question to answer again', { reason: 'nothing_to_regenerate' });
    }
    if (pivot === null || pivot.role !== 'user' || pivot.supersededBy !== null) {
      throw AppError.invalid('replyTo must name a question of this conversation that has not been replaced', { reason: 'not_replaceable' });
    }
    const answerId = newId();
    const questionId = replacement.kind === 'edit' ? newId() : null;
    const supersededBy = questionId ?? answerId;
    // Regenerate keeps the question and replaces what answered it; edit replaces the question too.
    const from = replacement.kind === 'regenerate' ? pivot.seq + 1 : pivot.seq;
    const { count } = await tx.message.updateMany({
      where: { conversationId: conversation.id, seq: { gte: from }, supersededBy: null },
      data: { supersededBy },
    });
    const now = new Date();
    const added = questionId === null ? 0 : 1;
    // Counted by increments, the sequence taken from the update's own result: an answer still
    // being stored in this conversation counts itself meanwhile.
    const updated = await tx.conversation.update({
      where: { id: conversation.id },
      data: { messageCount: { increment: added - count }, nextSeq: { increment: added }, lastModified: now },
      select: { id: true, ownerId: true, title: true, messageCount: true, nextSeq: true },
    });
    if (questionId !== null && replacement.kind === 'edit') {
      await tx.message.create({
        data: { id: questionId, conversationId: conversation.id, seq: updated.nextSeq - 1, role: 'user', content: replacement.content, createdAt: now },
      });
    }
    await tx.userState.upsert({
      where: { userId: query.userId },
      create: { userId: query.userId, currentConversationId: conversation.id },
      update: { currentConversationId: conversation.id },
    });
    const history = await tx.message.findMany({
      where: { conversationId: conversation.id, seq: { lt: pivot.seq }, supersededBy: null },
      orderBy: { seq: 'desc' },
      take: query.historyLimit,
      select: { role: true, content: true, toolCalls: true },
    });
    return {
      conversation: { id: updated.id, ownerId: updated.ownerId, title: updated.title, messageCount: updated.messageCount },
      history: history.reverse().map((message) => ({ role: message.role, content: message.content, toolCalls: toolCallsOf(message.toolCalls) })),
      question: replacement.kind === 'edit' ? replacement.content : pivot.content,
      answerId,
      supersededBy,
      questionId,
    };
  });
}

/**
 * Takes a replacement back when its generation failed before the provider answered and its client
 * will retry (an Idempotency-Key attempt, chat-attempt.ts): the replaced messages are in force
 * again and an edited question is removed.
 */
export async function forgetReplacement(store: Store, conversationId: string, turn: Pick<ReplacedTurn, 'supersededBy' | 'questionId'>): Promise<void> {
  await store.db.$transaction(async (tx) => {
    const { count } = await tx.message.updateMany({ where: { conversationId, supersededBy: turn.supersededBy }, data: { supersededBy: null } });
    const removed = turn.questionId === null ? 0 : (await tx.message.deleteMany({ where: { id: turn.questionId } })).count;
    await tx.conversation.updateMany({ where: { id: conversationId }, data: { messageCount: { increment: count - removed } } });
  });
}
