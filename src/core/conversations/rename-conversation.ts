import type { Store } from '../db/store.js';
import { requireOwnConversation } from './find-conversation.js';

export async function renameConversation(store: Store, userId: string, id: string, title: string): Promise<void> {
  const conversation = await requireOwnConversation(store, userId, id);
  await store.db.conversation.update({
    where: { id: conversation.id },
    data: { title, lastModified: new Date() },
  });
}
