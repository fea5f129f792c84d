import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';

/**
 * Deletes a conversation and its messages; if it was current, the user has none until the next
 * need. The chat store removes a long conversation without holding the event loop (issue 20).
 */
export async function deleteConversation(store: Store, userId: string, id: string): Promise<void> {
  if (!(await store.chat.deleteConversation(userId, id))) throw AppError.notFound('Conversation');
}
