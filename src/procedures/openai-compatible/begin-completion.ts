import type { User } from '../../core/auth/permissions.js';
import { callOptionsFrom, checkCallOptions } from '../../core/chat/chat-options.js';
import { chooseApiKey, chooseChatModel, type ChatTarget } from '../../core/chat/chat-target.js';
import { startTranscriptChat } from '../../core/chat/start-transcript-chat.js';
import { providerNames, type ProviderName } from '../../core/config/env-schema.js';
import type { Config } from '../../core/config/load-config.js';
import { AppError } from '../../core/errors/app-error.js';
import { getActiveModel } from '../../core/models/active-model.js';
import { requireModelAccess } from '../../core/models/require-model-access.js';
import { completionIdentity, type CompletionIdentity } from '../../core/openai-compatible/completion-object.js';
import { callerToolSpecs, readTranscript } from '../../core/openai-compatible/openai-messages.js';
import type { StreamJob } from '../../core/streams/stream-job.js';
import type { Context } from '../context.js';
import { requirePermissionFor } from '../guards.js';
import type { ChatCompletionInput } from './chat-completion.types.js';

/**
 * `<provider>/<model>` with a provider the service knows. A bare name (no slash) is the active
 * model's provider's (chooseChatModel); a slash after anything but a provider name is refused
 * instead of being read as a bare name, so `mistral/large` is a clear 400, not a request for a
 * model "mistral/large" sent to whichever provider happens to be active.
 */
function checkProvider(model: string): void {
  const slash = model.indexOf('/');
  if (slash === -1) return;
  const prefix = model.slice(0, slash);
  if (!providerNames.includes(prefix as ProviderName)) {
    throw AppError.invalid(`Unknown provider '${prefix}': model must be <provider>/<model> with provider ${providerNames.join(', ')}`, {
      field: 'model',
    });
  }
}

/**
 * The key a completion is sent with (CONTRACT §12, as on /api/unified/*): the caller's
 * X-Provider-Api-Key, else the server's key for the provider, else (auth off only) the Bearer
 * token, which SDKs always send, often as a dummy, so it never hides the server's key.
 */
function completionTarget(config: Config, chosen: { provider: ProviderName; model: string }, input: ChatCompletionInput): ChatTarget {
  const callerKey = input.apiKey?.trim() || undefined;
  const serverKey = config.providers[chosen.provider].apiKey;
  const given = callerKey ?? (serverKey === undefined ? input.bearerKey?.trim() || undefined : undefined);
  if (chosen.provider !== 'ollama' && given === undefined && serverKey === undefined) {
    throw AppError.invalid(
      `An API key for ${chosen.provider} is required: send it in the X-Provider-Api-Key header` +
        (config.AUTH_ENABLED ? '' : ' or as the Bearer token') +
        ', or configure one on the server',
      { field: 'apiKey' },
    );
  }
  return chooseApiKey(config, { kind: 'unified', provider: chosen.provider }, chosen, given);
}

/**
 * Everything a completion does before its transport takes over, as beginChat does for the other
 * chat paths: the provider's guard (providers:<provider>, before any byte), the model and key
 * rules, the model access of the caller's roles (CONTRACT §13, whatever named the model), the
 * parameters held against the provider (§12), the request's conversation read and checked, then
 * the engine's job.
 */
export async function beginCompletion(
  ctx: Context & { user: User },
  input: ChatCompletionInput,
): Promise<{ job: StreamJob; conversationId: string; identity: CompletionIdentity }> {
  checkProvider(input.model);
  const chosen = chooseChatModel(ctx.config, { kind: 'plain' }, input.model, await getActiveModel(ctx.store, ctx.config, ctx.user.id));
  await requirePermissionFor(ctx, `providers:${chosen.provider}`);
  await requireModelAccess(ctx.store, { userId: ctx.user.id, ip: ctx.ip }, ctx.policies.accessFor(ctx.user), chosen);
  const callerTools = callerToolSpecs(input.tools);
  const call = callOptionsFrom(input);
  checkCallOptions(
    chosen.provider,
    chosen.model,
    call,
    callerTools.map((tool) => tool.name),
  );
  const target = completionTarget(ctx.config, chosen, input);
  const transcript = readTranscript(input.messages, ctx.config.MAX_MESSAGE_LENGTH);
  const { job, conversationId } = await startTranscriptChat(ctx, {
    actor: { user: ctx.user, ip: ctx.ip },
    target,
    transcript,
    callerTools,
    options: {
      temperature: input.temperature ?? undefined,
      maxTokens: input.max_completion_tokens ?? input.max_tokens ?? undefined,
      call,
    },
  });
  return { job, conversationId, identity: completionIdentity(job.id, target.provider, target.model) };
}
