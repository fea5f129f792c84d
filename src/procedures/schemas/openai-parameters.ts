import { z } from 'zod';
import { reasoningEfforts } from '../../core/providers/call-options.js';

// OpenAI's sampling and output parameters (CONTRACT §12), with OpenAI's names and ranges: the
// same fields on /v1/chat/completions and in the `options` of the /api chat bodies. What each
// becomes for each provider is core/chat/chat-options.ts's; SDKs send null for "not given".

/** OpenAI's rule for function and schema names; Anthropic's tool names follow the same one. */
export const functionName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes');

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: functionName,
      description: z.string().max(10_000).optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);

const stopSequence = z.string().min(1).max(1000);

export const openAIParameterFields = {
  response_format: responseFormat.nullish(),
  /** Up to 4 sequences, as OpenAI takes. */
  stop: z.union([stopSequence, z.array(stopSequence).max(4)]).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  reasoning_effort: z.enum(reasoningEfforts).nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
};

/** The choice of the caller's own tools (/v1 only: the /api paths' tools are the service's). */
export const toolChoiceFields = {
  tool_choice: z
    .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: functionName }) })])
    .nullish(),
  parallel_tool_calls: z.boolean().nullish(),
};
