import { buildContext } from '../../core/context/conversation-context.js';
import { getOrCreateCurrentConversation } from '../../core/conversations/current-conversation.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { getContextMeta, getContextOutput } from './get-context.types.js';

export const getContextProcedure = requirePermission('conversations:load')
  .meta(getContextMeta)
  .input(noInput)
  .output(getContextOutput)
  .query(async ({ ctx }) => {
    const conversation = await getOrCreateCurrentConversation(ctx.store, ctx.user.id);
    const context = await buildContext(ctx.store, ctx.config, ctx.user.id, conversation);
    return { context, conversationId: context.conversationId, messageCount: context.messageCount };
  });
