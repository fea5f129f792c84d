import { setCurrentConversation } from '../../core/conversations/current-conversation.js';
import { loadConversation } from '../../core/conversations/load-conversation.js';
import { requirePermission } from '../guards.js';
import { loadedConversationOutput } from './get-conversation.types.js';
import { loadConversationInput, loadConversationMeta } from './load-conversation.types.js';

export const loadConversationProcedure = requirePermission('conversations:load')
  .meta(loadConversationMeta)
  .input(loadConversationInput)
  .output(loadedConversationOutput)
  .mutation(async ({ ctx, input }) => {
    await setCurrentConversation(ctx.store, ctx.user.id, input.conversationId);
    return loadConversation(ctx.store, ctx.user.id, input.conversationId);
  });
