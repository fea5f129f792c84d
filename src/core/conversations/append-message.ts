import type { Message, Prisma } from '../../generated/sqlite/client.js';
import { jsonObject, type Store } from '../db/store.js';
import { newId } from '../ids.js';
import { countsTowardMessageCount, type MessageRole } from './conversation-views.js';

export interface NewMessage {
  role: MessageRole;
  content: string;
  model?: string;
  provider?: string;
  /** An assistant answer still being generated (closed as `error` at start-up if the process dies). */
  streaming?: boolean;
}

/**
 * Appends a message at the conversation's next sequence number. One transaction takes the number,
 * counts the message and stores it, so concurrent appends never share a number and the count
 * never disagrees with the rows.
 */
export async function appendMessage(store: Store, conversationId: string, message: NewMessage): Promise<Message> {
  const now = new Date();
  return store.db.$transaction(async (tx) => {
    const conversation = await tx.conversation.update({
      where: { id: conversationId },
      data: {
        nextSeq: { increment: 1 },
        messageCount: { increment: countsTowardMessageCount(message.role) ? 1 : 0 },
        lastModified: now,
      },
    });
    return tx.message.create({
      data: {
        id: newId(),
        conversationId,
        seq: conversation.nextSeq - 1,
        role: message.role,
        content: message.content,
        model: message.model ?? null,
        provider: message.provider ?? null,
        streaming: message.streaming ?? false,
        createdAt: now,
      },
    });
  });
}

export interface AnswerUpdate {
  content: string;
  toolCalls: Prisma.InputJsonValue[];
}

export interface FinalAnswer extends AnswerUpdate {
  finishReason: string;
  usage: { inputTokens: number; outputTokens: number };
}

/** Stores the text and tool calls an answer has so far; it stays marked as streaming. */
export async function updateAnswer(store: Store, messageId: string, update: AnswerUpdate): Promise<void> {
  await store.db.message.update({
    where: { id: messageId },
    data: { content: update.content, toolCalls: update.toolCalls.length > 0 ? update.toolCalls : undefined },
  });
}

/** Stores an answer whole and closes it; the conversation records the provider and model of its last answer. */
export async function finishAnswer(
  store: Store,
  message: Pick<Message, 'id' | 'conversationId'>,
  answer: FinalAnswer,
  target: { provider: string; model: string },
): Promise<void> {
  const conversation = await store.db.conversation.findUnique({ where: { id: message.conversationId } });
  // Only the names: a target may also carry the API key, which must never be stored.
  const metadata = { ...jsonObject(conversation?.metadata), provider: target.provider, model: target.model };
  await store.db.$transaction([
    store.db.message.update({
      where: { id: message.id },
      data: {
        content: answer.content,
        toolCalls: answer.toolCalls.length > 0 ? answer.toolCalls : undefined,
        finishReason: answer.finishReason,
        usage: answer.usage,
        streaming: false,
      },
    }),
    store.db.conversation.updateMany({
      where: { id: message.conversationId },
      data: { metadata: metadata, lastModified: new Date() },
    }),
  ]);
}
