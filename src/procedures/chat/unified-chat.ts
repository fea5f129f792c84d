import { requirePermission } from '../guards.js';
import { beginChat } from './begin-chat.js';
import { chatReply, streamHandle } from './chat-reply.js';
import { oncePerKey } from './once-per-key.js';
import { resumeOnRetry } from './resume-on-retry.js';
import {
  unifiedChatProcedureInput,
  unifiedMessageMeta,
  unifiedMessageOutput,
  unifiedStreamMeta,
  unifiedStreamOutput,
} from './unified-chat.types.js';

export const unifiedMessageProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(unifiedMessageMeta)
  .input(unifiedChatProcedureInput)
  .output(unifiedMessageOutput)
  .mutation(oncePerKey(async ({ ctx, input }) => chatReply(await beginChat(ctx, input, { kind: 'unified', provider: input.provider }))));

export const unifiedStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(unifiedStreamMeta)
  .input(unifiedChatProcedureInput)
  .output(unifiedStreamOutput)
  .mutation(
    resumeOnRetry(oncePerKey(async ({ ctx, input }) => streamHandle(ctx.streams, await beginChat(ctx, input, { kind: 'unified', provider: input.provider }, { streaming: true })))),
  );
