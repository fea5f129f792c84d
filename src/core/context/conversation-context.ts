import type { ContextParts, ConversationHead } from '../chat-store/chat-store.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { activeModelOrSeed, type ActiveModel } from '../models/active-model.js';
import type { WorkspaceRef } from '../workspaces/active-workspace.js';

/** The context object of CONTRACT §3: GET /api/context, the /api/message reply and context_update. */
export interface ConversationContext {
  conversationId: string;
  messageCount: number;
  title: string;
  workspace: WorkspaceRef | null;
  model: ActiveModel;
}

type ConversationCounts = Pick<ConversationHead, 'id' | 'messageCount' | 'title'>;

/** The context from stored parts; `known` stands in for a conversation that has gone meanwhile. */
export function contextOf(parts: ContextParts, config: Config, known: ConversationCounts): ConversationContext {
  const conversation = parts.conversation ?? known;
  return {
    conversationId: conversation.id,
    messageCount: conversation.messageCount,
    title: conversation.title,
    workspace: parts.workspace,
    model: activeModelOrSeed(parts.activeModel, config),
  };
}

export async function buildContext(store: Store, config: Config, userId: string, conversation: ConversationCounts): Promise<ConversationContext> {
  return contextOf(await store.chat.readContext(userId, conversation.id), config, conversation);
}
