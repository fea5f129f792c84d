import type { Store } from '../db/store.js';
import { requireOwnConversation } from './find-conversation.js';

/** Deletes a conversation and its messages; if it was current, the user has none until the next need. */
export async function deleteConversation(store: Store, userId: string, id: string): Promise<void> {
  const conversation = await requireOwnConversation(store, userId, id);
  await store.db.$transaction([
    store.db.message.deleteMany({ where: { conversationId: conversation.id } }),
    store.db.conversation.delete({ where: { id: conversation.id } }),
    store.db.userState.updateMany({
      where: { userId, currentConversationId: conversation.id },
      data: { currentConversationId: null },
    }),
  ]);
}
