import { chatCompletionProcedure, chatCompletionStreamProcedure } from '../procedures/openai-compatible/chat-completion.js';
import { listOpenAIModelsProcedure } from '../procedures/openai-compatible/list-models.js';
import { router } from '../procedures/trpc.js';

/**
 * The OpenAI-compatible API (CONTRACT §10). Its HTTP paths (/v1/chat/completions, /v1/models)
 * are the hand-written bridge in rest-adapter/openai-compatible, which speaks OpenAI's wire format.
 */
export const openaiCompatibleRouter = router({
  chatCompletion: chatCompletionProcedure,
  chatCompletionStream: chatCompletionStreamProcedure,
  models: listOpenAIModelsProcedure,
});
