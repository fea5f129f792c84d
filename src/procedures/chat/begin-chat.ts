import type { User } from '../../core/auth/permissions.js';
import { callOptionsFrom, checkCallOptions } from '../../core/chat/chat-options.js';
import { chooseApiKey, chooseChatModel, type ChatRoute } from '../../core/chat/chat-target.js';
import { storedOrderId } from '../../core/chat/prompt-order-choice.js';
import { startChat } from '../../core/chat/start-chat.js';
import { AppError } from '../../core/errors/app-error.js';
import { activeModelOrSeed } from '../../core/models/active-model.js';
import { requireModelAccess } from '../../core/models/require-model-access.js';
import type { StreamJob } from '../../core/streams/stream-job.js';
import type { Context } from '../context.js';
import { requirePermissionFor } from '../guards.js';
import type { ChatInput } from '../schemas/chat.js';

/**
 * What every chat procedure does before its transport takes over: the input-dependent guards
 * (CONTRACT §5: `providers:<provider>`, and terminal:execute for `mode:"agent"`, both before any
 * byte), the model and key rules, then the engine's job. Whatever named the model (the request,
 * the user's active model, the service default), the caller's roles must be allowed it (§13):
 * checked here, before anything is stored or sent, for every chat path and transport.
 */
export async function beginChat(
  ctx: Context & { user: User },
  input: ChatInput,
  route: ChatRoute,
  options: { wholeLines?: boolean; streaming?: boolean } = {},
): Promise<StreamJob> {
  if (input.mode === 'agent') await requirePermissionFor(ctx, 'terminal:execute');
  const setup = await ctx.store.chat.readSetup({
    userId: ctx.user.id,
    conversationId: input.conversation_id,
    promptOrderId: storedOrderId(input.promptOrders),
  });
  const chosen = chooseChatModel(ctx.config, route, input.model, activeModelOrSeed(setup.activeModel, ctx.config));
  await requirePermissionFor(ctx, `providers:${chosen.provider}`);
  await requireModelAccess(ctx.store, { userId: ctx.user.id, ip: ctx.ip }, ctx.policies.accessFor(ctx.user), chosen);
  const message = input.message ?? '';
  if (message.length > ctx.config.MAX_MESSAGE_LENGTH) {
    throw AppError.invalid('Invalid request', {
      issues: [{ path: ['message'], message: `must be at most ${ctx.config.MAX_MESSAGE_LENGTH} characters` }],
    });
  }
  const call = callOptionsFrom(input.options ?? {});
  checkCallOptions(chosen.provider, chosen.model, call, [], 'options.');
  const target = chooseApiKey(ctx.config, route, chosen, input.apiKey);
  return startChat(ctx, {
    actor: { user: ctx.user, ip: ctx.ip },
    target,
    setup,
    message,
    replace: input.regenerate === true ? { kind: 'regenerate' } : input.replyTo !== undefined ? { kind: 'edit', messageId: input.replyTo } : undefined,
    mode: input.mode,
    conversationId: input.conversation_id,
    promptOrders: input.promptOrders,
    options: { temperature: input.options?.temperature, maxTokens: input.options?.maxTokens, call },
    wholeLines: options.wholeLines ?? false,
    streaming: options.streaming ?? false,
  });
}
