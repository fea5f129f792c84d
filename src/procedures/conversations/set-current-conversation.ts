import { setCurrentConversation } from '../../core/conversations/current-conversation.js';
import { requirePermission } from '../guards.js';
import {
  setCurrentConversationInput,
  setCurrentConversationMeta,
  setCurrentConversationOutput,
} from './set-current-conversation.types.js';

export const setCurrentConversationProcedure = requirePermission('conversations:load')
  .meta(setCurrentConversationMeta)
  .input(setCurrentConversationInput)
  .output(setCurrentConversationOutput)
  .mutation(async ({ ctx, input }) => {
    const conversation = await setCurrentConversation(ctx.store, ctx.user.id, input.id);
    ctx.events.publish(ctx.user.id, { kind: 'conversation', action: 'current', conversationId: conversation.id });
    return { success: true, conversationId: conversation.id };
  });
