import { loadConversation } from '../../core/conversations/load-conversation.js';
import { requirePermission } from '../guards.js';
import { getConversationInput, getConversationMeta, loadedConversationOutput } from './get-conversation.types.js';

export const getConversationProcedure = requirePermission('conversations:load')
  .meta(getConversationMeta)
  .input(getConversationInput)
  .output(loadedConversationOutput)
  .query(({ ctx, input }) => loadConversation(ctx.store, ctx.user.id, input.id));
