import { collectReply } from '../../core/chat/collect-reply.js';
import { chatCompletion } from '../../core/openai-compatible/completion-object.js';
import { oncePerKey } from '../chat/once-per-key.js';
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
  .mutation(
    oncePerKey(async ({ ctx, input }) => {
      const { job, conversationId, identity } = await beginCompletion(ctx, input);
      ctx.response.headers[CONVERSATION_HEADER] = conversationId;
      return chatCompletion(identity, await collectReply(job), input.logprobs === true);
    }),
  );

export const chatCompletionStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .input(chatCompletionInput)
  .output(chatCompletionStreamOutput)
  .mutation(
    // No resume on /v1 (CONTRACT §12): its clients do not send Last-Event-ID, and a closed stream is aborted.
    oncePerKey(async ({ ctx, input }) => {
      const { job, conversationId, identity } = await beginCompletion(ctx, input);
      // The bridge reads the job by id next; kept for that read even if it has finished already.
      ctx.streams.handOver(job);
      ctx.response.headers[CONVERSATION_HEADER] = conversationId;
      return { streamId: job.id, conversationId, ...identity, includeUsage: input.stream_options?.include_usage === true };
    }),
  );
