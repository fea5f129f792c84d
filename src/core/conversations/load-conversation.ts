import { jsonObject, type Store } from '../db/store.js';
import { toMessageView, toSummary, type ConversationSummary, type MessageView } from './conversation-views.js';
import { requireOwnConversation } from './find-conversation.js';

export interface LoadedConversation {
  conversation: ConversationSummary;
  messages: MessageView[];
  metadata: Record<string, unknown>;
}

export async function loadConversation(store: Store, userId: string, id: string): Promise<LoadedConversation> {
  const conversation = await requireOwnConversation(store, userId, id);
  const messages = await store.reads.messages(conversation.id);
  return {
    conversation: toSummary(conversation),
    messages: messages.map(toMessageView),
    metadata: jsonObject(conversation.metadata),
  };
}
