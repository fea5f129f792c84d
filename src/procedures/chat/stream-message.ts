import { requirePermission } from '../guards.js';
import { beginChat } from './begin-chat.js';
import { streamHandle } from './chat-reply.js';
import { streamMarkdownMeta, streamMessageInput, streamMessageMeta, streamMessageOutput } from './stream-message.types.js';

export const streamMessageProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(streamMessageMeta)
  .input(streamMessageInput)
  .output(streamMessageOutput)
  .mutation(async ({ ctx, input }) => streamHandle(await beginChat(ctx, input, { kind: 'plain' })));

export const streamMarkdownProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(streamMarkdownMeta)
  .input(streamMessageInput)
  .output(streamMessageOutput)
  .mutation(async ({ ctx, input }) => streamHandle(await beginChat(ctx, input, { kind: 'plain' }, { wholeLines: true })));
