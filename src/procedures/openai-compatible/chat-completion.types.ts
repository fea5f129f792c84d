import { z } from 'zod';
import { headerSafeMessage, headerSafeText } from '../schemas/common.js';
import { functionName, openAIParameterFields, toolChoiceFields } from '../schemas/openai-parameters.js';

// POST /v1/chat/completions (CONTRACT §10, §12): OpenAI's request body, the part the service
// takes. A field it does not know is refused with 400 naming it (it might change the answer's
// shape); `ignoredFields` are the harmless ones accepted and ignored. The wire format in and out
// is the hand-written bridge's (rest-adapter/openai-compatible), so no `openapi` meta here: these
// procedures are not /api REST paths and stay out of /api/openapi.json.

const textPart = z.object({ type: z.literal('text'), text: z.string() });
/** Only text: the engine carries no images or audio (any other part type → 400 naming it). */
const content = z.union([z.string(), z.array(textPart)]);

const toolCall = z.object({
  id: z.string().min(1).max(200),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1).max(200), arguments: z.string().default('') }),
});

const message = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content }),
  z.object({ role: z.literal('developer'), content }),
  z.object({ role: z.literal('user'), content }),
  z.object({ role: z.literal('assistant'), content: content.nullish(), tool_calls: z.array(toolCall).max(128).optional() }),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string().min(1).max(200) }),
]);

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: functionName,
    description: z.string().max(10_000).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const tokenLimit = z.number().int().min(1).max(1_000_000).nullish();
const providerKey = z.string().max(1000).regex(headerSafeText, headerSafeMessage);

/**
 * Accepted and ignored (CONTRACT §12, listed in the README): who the end user is (`user`, and
 * `safety_identifier` / `prompt_cache_key` that OpenAI now has instead), whether OpenAI stores the
 * completion, its tags, the service tier and predicted output change nothing in the answer's
 * shape or validity, so their values are not checked either (the body's size limit bounds them).
 */
const ignoredFields = {
  user: z.unknown().optional(),
  safety_identifier: z.unknown().optional(),
  prompt_cache_key: z.unknown().optional(),
  store: z.unknown().optional(),
  metadata: z.unknown().optional(),
  service_tier: z.unknown().optional(),
  prediction: z.unknown().optional(),
};

const completionFields = {
  /** `<provider>/<model>`, or a bare name of the active model's provider. */
  model: z.string().trim().min(1).max(300),
  messages: z.array(message).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: tokenLimit,
  max_completion_tokens: tokenLimit,
  n: z.literal(1, 'only one choice (n=1) is generated').nullish(),
  tools: z.array(functionTool).max(128).nullish(),
  ...toolChoiceFields,
  ...openAIParameterFields,
  ...ignoredFields,
  /**
   * The caller's provider key: it wins over the server's. The bridge fills it from the
   * X-Provider-Api-Key header; typed /trpc clients pass it here.
   */
  apiKey: providerKey.optional(),
  /**
   * With AUTH_ENABLED=false the bridge puts the Bearer token here: OpenAI's SDKs always send one,
   * often a dummy, so it is the provider key only when the server has none (CONTRACT §12).
   */
  bearerKey: providerKey.optional(),
};

const knownFields = new Set(Object.keys(completionFields));

export const chatCompletionInput = z.looseObject(completionFields).superRefine((body, ctx) => {
  for (const field of Object.keys(body)) {
    if (!knownFields.has(field)) ctx.addIssue({ code: 'custom', path: [field], message: 'is not supported by this service' });
  }
});

export type ChatCompletionInput = z.output<typeof chatCompletionInput>;

const toolCallOut = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });
const usageOut = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });
const finishReason = z.enum(['stop', 'length', 'tool_calls']);
const topLogprob = z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number()).nullable() });
const tokenLogprob = topLogprob.extend({ top_logprobs: z.array(topLogprob) });

export const chatCompletionOutput = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), refusal: z.null(), tool_calls: z.array(toolCallOut).optional() }),
      /** The tokens' log probabilities when `logprobs` was asked for (OpenAI only), else null. */
      logprobs: z.object({ content: z.array(tokenLogprob).nullable(), refusal: z.array(tokenLogprob).nullable() }).nullable(),
      finish_reason: finishReason,
    }),
  ),
  usage: usageOut,
});

/** What the streaming procedure hands the bridge: the job to follow and how to write its chunks. */
export const chatCompletionStreamOutput = z.object({
  streamId: z.string(),
  conversationId: z.string(),
  id: z.string(),
  created: z.number(),
  model: z.string(),
  includeUsage: z.boolean(),
});

export type ChatCompletionStreamHandle = z.output<typeof chatCompletionStreamOutput>;

