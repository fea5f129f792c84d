import { startNewConversation } from '../../core/conversations/current-conversation.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { clearContextMeta, clearContextOutput } from './clear-context.types.js';

export const clearContextProcedure = requirePermission('chat:clear')
  .meta(clearContextMeta)
  .input(noInput)
  .output(clearContextOutput)
  .mutation(async ({ ctx }) => {
    const conversation = await startNewConversation(ctx.store, ctx.user.id);
    ctx.events.publish(ctx.user.id, { kind: 'conversation', action: 'current', conversationId: conversation.id });
    return { success: true, message: 'Context cleared; a new conversation was started', conversationId: conversation.id };
  });
