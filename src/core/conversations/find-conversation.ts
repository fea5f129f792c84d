import type { StoredConversation } from '../chat-store/conversation-reads.js';
import { AppError } from '../errors/app-error.js';
import { isId } from '../ids.js';
import type { Store } from '../db/store.js';

/**
 * The caller's conversation by id. A malformed id, an unknown one and another user's all answer
 * the same 404, so the existence of other users' data is not revealed (CONTRACT §0).
 */
export async function requireOwnConversation(store: Store, userId: string, id: string): Promise<StoredConversation> {
  const conversation = isId(id) ? await store.reads.find(id) : null;
  if (conversation?.ownerId !== userId) throw AppError.notFound('Conversation');
  return conversation;
}
