import { deleteConversation } from '../../core/conversations/delete-conversation.js';
import { requirePermission } from '../guards.js';
import { successMessageOutput } from '../schemas/common.js';
import { deleteConversationInput, deleteConversationMeta } from './delete-conversation.types.js';

export const deleteConversationProcedure = requirePermission('conversations:delete')
  .meta(deleteConversationMeta)
  .input(deleteConversationInput)
  .output(successMessageOutput)
  .mutation(async ({ ctx, input }) => {
    await deleteConversation(ctx.store, ctx.user.id, input.id);
    ctx.events.publish(ctx.user.id, { kind: 'conversation', action: 'deleted', conversationId: input.id });
    return { success: true, message: 'Conversation deleted' };
  });
