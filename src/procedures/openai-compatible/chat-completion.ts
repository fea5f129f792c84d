import { collectReply } from '../../core/chat/collect-reply.js';
import { chatCompletion } from '../../core/openai-compatible/completion-object.js';
import { requirePermission } from '../guards.js';
import { beginCompletion } from './begin-completion.js';
import { chatCompletionInput, chatCompletionOutput, chatCompletionStreamOutput } from './chat-completion.types.js';

// POST /v1/chat/completions: one procedure per reply kind, as chat.send and chat.stream are; the
// bridge picks by the body's `stream`. Guarded and rate-limited as every chat path (CONTRACT §5).

/** The stored conversation's id, for clients that want to find the exchange again. */
const CONVERSATION_HEADER = 'X-Conversation-Id';

export const chatCompletionProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .input(chatCompletionInput)
  .output(chatCompletionOutput)
  .mutation(async ({ ctx, input }) => {
    const { job, conversationId, identity } = await beginCompletion(ctx, input);
    ctx.response.headers[CONVERSATION_HEADER] = conversationId;
    return chatCompletion(identity, await collectReply(job));
  });

export const chatCompletionStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .input(chatCompletionInput)
  .output(chatCompletionStreamOutput)
  .mutation(async ({ ctx, input }) => {
    const { job, conversationId, identity } = await beginCompletion(ctx, input);
    ctx.response.headers[CONVERSATION_HEADER] = conversationId;
    return { streamId: job.id, conversationId, ...identity, includeUsage: input.stream_options?.include_usage === true };
  });
