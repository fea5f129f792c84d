import { z } from 'zod';
import { headerSafeMessage, headerSafeText } from '../schemas/common.js';

// POST /v1/chat/completions (CONTRACT §10): OpenAI's request body, the part the service takes.
// Unknown fields (n=1, user, seed, …) are ignored like every body's; the wire format in and out
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
    // OpenAI's own rule for function names; Anthropic's is the same.
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes'),
    description: z.string().max(10_000).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const tokenLimit = z.number().int().min(1).max(1_000_000).nullish();

export const chatCompletionInput = z.object({
  /** `<provider>/<model>`, or a bare name of the active model's provider. */
  model: z.string().trim().min(1).max(300),
  messages: z.array(message).min(1).max(10_000),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  max_tokens: tokenLimit,
  max_completion_tokens: tokenLimit,
  n: z.literal(1, 'only one choice (n=1) is generated').nullish(),
  tools: z.array(functionTool).max(128).optional(),
  /** Only "none" changes anything (no tools offered); the provider decides otherwise. */
  tool_choice: z.unknown().optional(),
  /**
   * The provider key. The bridge fills it from the X-Provider-Api-Key header (or, with auth off,
   * the Bearer token OpenAI's SDKs send); typed /trpc clients pass it here.
   */
  apiKey: z.string().max(1000).regex(headerSafeText, headerSafeMessage).optional(),
});

export type ChatCompletionInput = z.output<typeof chatCompletionInput>;

const toolCallOut = z.object({ id: z.string(), type: z.literal('function'), function: z.object({ name: z.string(), arguments: z.string() }) });
const usageOut = z.object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() });
const finishReason = z.enum(['stop', 'length', 'tool_calls']);

export const chatCompletionOutput = z.object({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number(),
      message: z.object({ role: z.literal('assistant'), content: z.string().nullable(), refusal: z.null(), tool_calls: z.array(toolCallOut).optional() }),
      logprobs: z.null(),
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

