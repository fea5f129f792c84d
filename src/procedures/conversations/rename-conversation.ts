import { renameConversation } from '../../core/conversations/rename-conversation.js';
import { requirePermission } from '../guards.js';
import { successOutput } from '../schemas/common.js';
import { renameConversationInput, renameConversationMeta } from './rename-conversation.types.js';

export const renameConversationProcedure = requirePermission('conversations:save')
  .meta(renameConversationMeta)
  .input(renameConversationInput)
  .output(successOutput)
  .mutation(async ({ ctx, input }) => {
    await renameConversation(ctx.store, ctx.user.id, input.id, input.title);
    ctx.events.publish(ctx.user.id, { kind: 'conversation', action: 'renamed', conversationId: input.id, title: input.title });
    return { success: true };
  });
