import { saveConversation } from '../../core/conversations/save-conversation.js';
import { requirePermission } from '../guards.js';
import { saveConversationInput, saveConversationMeta, saveConversationOutput } from './save-conversation.types.js';

export const saveConversationProcedure = requirePermission('conversations:save')
  .meta(saveConversationMeta)
  .input(saveConversationInput)
  .output(saveConversationOutput)
  .mutation(async ({ ctx, input }) => {
    const conversationId = await saveConversation(ctx.store, ctx.user.id, input, ctx.config.MAX_IMPORT_MESSAGES);
    ctx.events.publish(ctx.user.id, { kind: 'conversation', action: 'saved', conversationId });
    return { success: true, conversationId };
  });
