import type { User } from '../../core/auth/permissions.js';
import { chooseApiKey, chooseChatModel } from '../../core/chat/chat-target.js';
import { startTranscriptChat } from '../../core/chat/start-transcript-chat.js';
import { providerNames, type ProviderName } from '../../core/config/env-schema.js';
import { AppError } from '../../core/errors/app-error.js';
import { getActiveModel } from '../../core/models/active-model.js';
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
 * Everything a completion does before its transport takes over, as beginChat does for the other
 * chat paths: the provider's guard (providers:<provider>, before any byte), the model and key
 * rules, the request's conversation read and checked, then the engine's job. Hosted providers
 * need the caller's key (CONTRACT §1's per-provider rule): the server's key is not lent to API
 * clients.
 */
export async function beginCompletion(
  ctx: Context & { user: User },
  input: ChatCompletionInput,
): Promise<{ job: StreamJob; conversationId: string; identity: CompletionIdentity }> {
  checkProvider(input.model);
  const chosen = chooseChatModel(ctx.config, { kind: 'plain' }, input.model, await getActiveModel(ctx.store, ctx.config));
  await requirePermissionFor(ctx, `providers:${chosen.provider}`);
  const keyRequired =
    `An API key for ${chosen.provider} is required: send it in the X-Provider-Api-Key header` +
    (ctx.config.AUTH_ENABLED ? '' : ' or as the Bearer token');
  const target = chooseApiKey(ctx.config, { kind: 'provider', provider: chosen.provider }, chosen, input.apiKey, keyRequired);
  const transcript = readTranscript(input.messages, ctx.config.MAX_MESSAGE_LENGTH);
  const { job, conversationId } = await startTranscriptChat(ctx, {
    actor: { user: ctx.user, ip: ctx.ip },
    target,
    transcript,
    callerTools: callerToolSpecs(input.tools, input.tool_choice),
    options: {
      temperature: input.temperature ?? undefined,
      maxTokens: input.max_completion_tokens ?? input.max_tokens ?? undefined,
    },
  });
  return { job, conversationId, identity: completionIdentity(job.id, target.provider, target.model) };
}
