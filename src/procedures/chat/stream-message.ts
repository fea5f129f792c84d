import { requirePermission } from '../guards.js';
import { beginChat } from './begin-chat.js';
import { streamHandle } from './chat-reply.js';
import { oncePerKey } from './once-per-key.js';
import { resumeOnRetry } from './resume-on-retry.js';
import { streamMarkdownMeta, streamMessageInput, streamMessageMeta, streamMessageOutput } from './stream-message.types.js';

export const streamMessageProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(streamMessageMeta)
  .input(streamMessageInput)
  .output(streamMessageOutput)
  .mutation(resumeOnRetry(oncePerKey(async ({ ctx, input }) => streamHandle(ctx.streams, await beginChat(ctx, input, { kind: 'plain' }, { streaming: true })))));

export const streamMarkdownProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(streamMarkdownMeta)
  .input(streamMessageInput)
  .output(streamMessageOutput)
  .mutation(
    resumeOnRetry(oncePerKey(async ({ ctx, input }) => streamHandle(ctx.streams, await beginChat(ctx, input, { kind: 'plain' }, { wholeLines: true, streaming: true })))),
  );
