import type { Actor } from '../auth/actor.js';
import { deleteConversation } from '../conversations/delete-conversation.js';
import { recordTranscript, type TranscriptRow } from '../conversations/record-transcript.js';
import type { CallOptions } from '../providers/call-options.js';
import type { ChatMessage, ToolSpec } from '../providers/chat-protocol.js';
import type { StreamJob } from '../streams/stream-job.js';
import type { ChatDeps } from './chat-deps.js';
import { temperatureFor } from './chat-options.js';
import type { ChatTarget } from './chat-target.js';
import { launchExchange } from './launch-exchange.js';

/** A conversation the caller sent whole, in the engine's terms. */
export interface Transcript {
  /** The one system prompt providers take. */
  system: string;
  /** What the model is sent. */
  messages: ChatMessage[];
  /** What is stored: tool results folded into the calls they answer, as the engine stores its own. */
  rows: TranscriptRow[];
}

export interface TranscriptChatRequest {
  actor: Actor;
  target: ChatTarget;
  /** The whole conversation, as the caller sent it. */
  transcript: Transcript;
  /** The caller's own tools: offered to the model, their calls handed back unrun. */
  callerTools: readonly ToolSpec[];
  options: { temperature?: number | undefined; maxTokens?: number | undefined; call?: CallOptions | undefined };
}

/**
 * A generation over a conversation the caller sent whole (the OpenAI-compatible path): the same
 * engine, job, stream cap and storage as every chat path, but the model sees exactly the
 * caller's messages and system prompt (no prompt order, no workspace, none of the service's
 * tools), and the conversation is stored new for each request. Resolves once the provider has
 * answered 2xx, like startChat.
 */
export async function startTranscriptChat(deps: ChatDeps, request: TranscriptChatRequest): Promise<{ job: StreamJob; conversationId: string }> {
  const userId = request.actor.user.id;
  let conversationId = '';
  const job = await launchExchange(deps, { userId, provider: request.target.provider }, async () => {
    const conversation = await recordTranscript(deps.store, userId, request.transcript.rows);
    conversationId = conversation.id;
    const takeBack = () => deleteConversation(deps.store, userId, conversation.id);
    deps.attempt?.stored(takeBack);
    return {
      userId,
      user: request.actor.user,
      takeBack,
      conversation,
      target: request.target,
      system: request.transcript.system,
      messages: request.transcript.messages,
      tools: [],
      callerTools: request.callerTools,
      options: {
        temperature: temperatureFor(request.target.provider, request.options.temperature, deps.config),
        maxTokens: request.options.maxTokens,
        call: request.options.call,
      },
      wholeLines: false,
    };
  });
  return { job, conversationId };
}
