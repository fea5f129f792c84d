import type { ProviderName } from '../../core/config/env-schema.js';
import { requirePermission } from '../guards.js';
import { chatReplySchema, hostedChatInput, localChatInput, streamHandleSchema } from '../schemas/chat.js';
import { beginChat } from './begin-chat.js';
import { chatReply, streamHandle } from './chat-reply.js';
import { oncePerKey } from './once-per-key.js';
import { resumeOnRetry } from './resume-on-retry.js';
import { providerMessageMeta, providerStreamMeta } from './provider-chat.types.js';

// /api/{openai,anthropic,ollama}/message|stream: the same engine, the provider fixed by the path.
// The hosted ones require the caller's apiKey (CONTRACT §1); Ollama takes none.

const inputFor = (provider: ProviderName) => (provider === 'ollama' ? localChatInput : hostedChatInput);

export function providerMessageProcedure(provider: ProviderName) {
  return requirePermission('chat:send', { rateGroup: 'chat' })
    .meta(providerMessageMeta(provider))
    .input(inputFor(provider))
    .output(chatReplySchema)
    .mutation(oncePerKey(async ({ ctx, input }) => chatReply(await beginChat(ctx, input, { kind: 'provider', provider }))));
}

export function providerStreamProcedure(provider: ProviderName) {
  return requirePermission('chat:send', { rateGroup: 'chat' })
    .meta(providerStreamMeta(provider))
    .input(inputFor(provider))
    .output(streamHandleSchema)
    .mutation(resumeOnRetry(oncePerKey(async ({ ctx, input }) => streamHandle(ctx.streams, await beginChat(ctx, input, { kind: 'provider', provider }, { streaming: true })))));
}
