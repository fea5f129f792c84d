import type { Prisma } from '../../generated/sqlite/client.js';
import { containsText, type Store } from '../db/store.js';
import { toSummary, type ConversationSummary } from './conversation-views.js';

export interface ListConversationsQuery {
  limit: number;
  offset: number;
  q?: string | undefined;
}

export interface ConversationPage {
  conversations: ConversationSummary[];
  total: number;
}

/** The caller's conversations, newest first; empty untitled ones are not listed (CONTRACT §7). */
export async function listConversations(
  store: Store,
  userId: string,
  query: ListConversationsQuery,
): Promise<ConversationPage> {
  const text = query.q?.trim();
  const where: Prisma.ConversationWhereInput = {
    ownerId: userId,
    OR: [{ messageCount: { gt: 0 } }, { title: { not: '' } }],
    ...(text
      ? {
          AND: [
            {
              OR: [
                { title: containsText(store.kind, text) },
                { messages: { some: { content: containsText(store.kind, text) } } },
              ],
            },
          ],
        }
      : {}),
  };
  const [rows, total] = await Promise.all([
    store.db.conversation.findMany({
      where,
      orderBy: [{ lastModified: 'desc' }, { id: 'asc' }],
      skip: query.offset,
      take: query.limit,
    }),
    store.db.conversation.count({ where }),
  ]);
  return { conversations: rows.map(toSummary), total };
}
