import { listConversations } from '../../core/conversations/list-conversations.js';
import { requirePermission } from '../guards.js';
import { listConversationsInput, listConversationsMeta, listConversationsOutput } from './list-conversations.types.js';

export const listConversationsProcedure = requirePermission('conversations:list')
  .meta(listConversationsMeta)
  .input(listConversationsInput)
  .output(listConversationsOutput)
  .query(({ ctx, input }) => listConversations(ctx.store, ctx.user.id, input));
