import { z } from 'zod';
import { providerNames } from '../../core/config/env-schema.js';
import { chatModes } from '../../core/chat/chat-tools.js';
import { finishReasons } from '../../core/chat/chat-events.js';
import { promptOrderInputSchema } from '../../core/prompt-orders/prompt-order-schema.js';
import { headerSafeMessage, headerSafeText } from './common.js';
import { openAIParameterFields } from './openai-parameters.js';
import { contextSchema } from './conversation.js';

// The chat bodies of interface-spec "Chat and assistant" and "Unified and per-provider chat",
// with CONTRACT §6's `options`. MAX_MESSAGE_LENGTH is a setting, so the procedures check it.

const promptOrdersSchema = z.union([
  z.object({ orderId: z.string().min(1).max(200) }),
  z.object({ order: promptOrderInputSchema }),
]);

const chatFields = {
  /** Required, except with `regenerate` (the stored question is answered again). */
  message: z.string().min(1, 'must not be empty').optional(),
  /** CONTRACT §12: answer the conversation's last question again; what answered it is superseded. */
  regenerate: z.boolean().optional(),
  /** CONTRACT §12: edit and resend; `message` replaces this question of the conversation and all after it. */
  replyTo: z.string().min(1).max(200).optional(),
  mode: z.enum(chatModes).default('assistant'),
  model: z.string().trim().min(1).max(300).optional(),
  conversation_id: z.string().max(200).optional(),
  promptOrders: promptOrdersSchema.optional(),
  /**
   * CONTRACT §6's options and §12's OpenAI parameters by OpenAI's names (openai-parameters.ts).
   * Strict: an option the service does not know is a 400, never silently dropped.
   */
  options: z
    .strictObject({
      temperature: z.number().min(0).max(2).optional(),
      maxTokens: z.number().int().min(1).max(1_000_000).optional(),
      ...openAIParameterFields,
    })
    .optional(),
};

/** The `message` rule, which depends on `regenerate` and `replyTo`. */
function checkTurn(input: { message?: string | undefined; regenerate?: boolean | undefined; replyTo?: string | undefined }, ctx: z.RefinementCtx): void {
  if (input.regenerate === true && input.replyTo !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['replyTo'], message: 'regenerate and replyTo cannot be combined' });
  }
  if (input.regenerate === true && input.message !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['message'], message: 'regenerate answers the stored question again; use replyTo to change it' });
  }
  if (input.regenerate !== true && input.message === undefined) {
    ctx.addIssue({ code: 'custom', path: ['message'], message: 'Required' });
  }
}

const apiKey = z.string().max(1000).regex(headerSafeText, headerSafeMessage);

/** /api/message and its stream paths: apiKey optional (the server's key otherwise). */
export const plainChatInput = z.object({ ...chatFields, apiKey: apiKey.optional() }).superRefine(checkTurn);

/** /api/unified/*: the provider is named in the body. */
export const unifiedChatInput = z.object({ ...chatFields, provider: z.enum(providerNames), apiKey: apiKey.optional() }).superRefine(checkTurn);

/** /api/openai/* and /api/anthropic/*: the caller's key is required (checked with a clear message). */
export const hostedChatInput = z.object({ ...chatFields, apiKey: apiKey.optional() }).superRefine(checkTurn);

/** /api/ollama/*: no key. */
export const localChatInput = z.object(chatFields).superRefine(checkTurn);

export type ChatInput = z.output<typeof plainChatInput>;

export const usageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });

export const doneMetadataSchema = z.object({
  conversationId: z.string(),
  messageId: z.string(),
  provider: z.string(),
  model: z.string(),
  finishReason: z.enum(finishReasons),
  usage: usageSchema,
  durationMs: z.number(),
  timeToFirstTokenMs: z.number().nullable(),
});

/** Every non-streaming chat reply: the spec's fields of each path, in one shape. */
export const chatReplySchema = z.object({
  success: z.boolean(),
  response: z.string(),
  context: contextSchema,
  conversation_id: z.string(),
  conversationId: z.string(),
  model: z.string(),
  provider: z.string(),
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), params: z.unknown(), result: z.unknown().optional() })),
  metadata: doneMetadataSchema,
  /** The answer's token log probabilities, when `options.logprobs` asked for them (OpenAI only). */
  logprobs: z
    .array(
      z.object({
        token: z.string(),
        logprob: z.number(),
        bytes: z.array(z.number()).nullable(),
        top_logprobs: z.array(z.object({ token: z.string(), logprob: z.number(), bytes: z.array(z.number()).nullable() })),
      }),
    )
    .optional(),
});

/** What a streaming procedure hands the SSE bridge. */
export const streamHandleSchema = z.object({
  streamId: z.string(),
  after: z.number().int().min(0),
});

export type ChatReply = z.output<typeof chatReplySchema>;
