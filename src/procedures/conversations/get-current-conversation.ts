import { getOrCreateCurrentConversation } from '../../core/conversations/current-conversation.js';
import { loadConversation } from '../../core/conversations/load-conversation.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { loadedConversationOutput } from './get-conversation.types.js';
import { getCurrentConversationMeta } from './get-current-conversation.types.js';

export const getCurrentConversationProcedure = requirePermission('conversations:load')
  .meta(getCurrentConversationMeta)
  .input(noInput)
  .output(loadedConversationOutput)
  .query(async ({ ctx }) => {
    const current = await getOrCreateCurrentConversation(ctx.store, ctx.user.id);
    return loadConversation(ctx.store, ctx.user.id, current.id);
  });
