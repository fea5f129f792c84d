import type { Conversation } from '../../generated/sqlite/client.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { getActiveModel, type ActiveModel } from '../models/active-model.js';
import { findActiveWorkspace, toWorkspaceRef, type WorkspaceRef } from '../workspaces/active-workspace.js';

/** The context object of CONTRACT §3: GET /api/context, the /api/message reply and context_update. */
export interface ConversationContext {
  conversationId: string;
  messageCount: number;
  title: string;
  workspace: WorkspaceRef | null;
  model: ActiveModel;
}

export async function buildContext(
  store: Store,
  config: Config,
  userId: string,
  conversation: Conversation,
): Promise<ConversationContext> {
  const [workspace, model] = await Promise.all([
    findActiveWorkspace(store, userId),
    getActiveModel(store, config),
  ]);
  return {
    conversationId: conversation.id,
    messageCount: conversation.messageCount,
    title: conversation.title,
    workspace: workspace ? toWorkspaceRef(workspace) : null,
    model,
  };
}
