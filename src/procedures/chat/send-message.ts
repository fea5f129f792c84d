import { requirePermission } from '../guards.js';
import { beginChat } from './begin-chat.js';
import { chatReply } from './chat-reply.js';
import { oncePerKey } from './once-per-key.js';
import { sendMessageInput, sendMessageMeta, sendMessageOutput } from './send-message.types.js';

export const sendMessageProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(sendMessageMeta)
  .input(sendMessageInput)
  .output(sendMessageOutput)
  .mutation(oncePerKey(async ({ ctx, input }) => chatReply(await beginChat(ctx, input, { kind: 'plain' }))));
