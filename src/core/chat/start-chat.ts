import type { Actor } from '../auth/actor.js';
import { appendMessage } from '../conversations/append-message.js';
import { defaultTitle } from '../conversations/conversation-views.js';
import { getOrCreateCurrentConversation, setCurrentConversation } from '../conversations/current-conversation.js';
import { requireOwnConversation } from '../conversations/find-conversation.js';
import { AppError } from '../errors/app-error.js';
import type { ChatMessage } from '../providers/chat-protocol.js';
import type { StreamJob } from '../streams/stream-job.js';
import { describeActiveWorkspace } from '../workspaces/describe-workspace.js';
import type { ChatDeps } from './chat-deps.js';
import type { ChatTarget } from './chat-target.js';
import { toolsForMode, type ChatMode } from './chat-tools.js';
import { loadHistory, toChatMessages } from './history-window.js';
import { choosePromptSections, type PromptOrderSelection } from './prompt-order-choice.js';
import { runExchange, type ReadyGate } from './run-exchange.js';
import { buildSystemPrompt } from './system-prompt.js';

export interface ChatRequest {
  actor: Actor;
  target: ChatTarget;
  message: string;
  mode: ChatMode;
  conversationId?: string | undefined;
  promptOrders?: PromptOrderSelection;
  options?: { temperature?: number | undefined; maxTokens?: number | undefined } | undefined;
  /** The markdown streams: text events end on line boundaries. */
  wholeLines?: boolean;
}

function readyGate(): ReadyGate & { promise: Promise<void> } {
  let settled = false;
  let resolve!: () => void;
  let reject!: (error: AppError) => void;
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return {
    promise,
    get settled() {
      return settled;
    },
    resolve() {
      if (settled) return;
      settled = true;
      resolve();
    },
    reject(error) {
      if (settled) return;
      settled = true;
      reject(error);
    },
  };
}

/**
 * Starts a generation as a job (CONTRACT §6, §7) and resolves once the provider has answered 2xx,
 * so every earlier failure (unknown conversation or prompt order, the stream cap, the provider
 * refusing, failing or timing out) is still a plain error for the caller. The user message is
 * stored before the model is called and the answered conversation becomes current.
 */
export async function startChat(deps: ChatDeps, request: ChatRequest): Promise<StreamJob> {
  const userId = request.actor.user.id;
  const conversation =
    request.conversationId === undefined
      ? await getOrCreateCurrentConversation(deps.store, userId)
      : await requireOwnConversation(deps.store, userId, request.conversationId);
  const sections = await choosePromptSections(deps.store, request.promptOrders);
  const job = deps.streams.open(userId, request.target.provider);
  const gate = readyGate();
  try {
    const stored = await appendMessage(deps.store, conversation.id, { role: 'user', content: request.message });
    await setCurrentConversation(deps.store, userId, conversation.id);
    if (conversation.title === '') {
      await deps.store.db.conversation.update({ where: { id: conversation.id }, data: { title: defaultTitle([stored]) } });
    }
    const workspace = await describeActiveWorkspace(deps.store, userId);
    const tools = toolsForMode(
      request.mode,
      workspace && workspace.status !== 'missing' ? { deps, actor: request.actor, workspaceRoot: workspace.path } : null,
    );
    const history = await loadHistory(deps.store, conversation.id, stored.seq, deps.config.MAX_CONVERSATION_HISTORY);
    const messages: ChatMessage[] = [...toChatMessages(history, tools.length > 0), { role: 'user', content: request.message }];
    void runExchange(
      deps,
      {
        userId,
        conversation,
        target: request.target,
        system: buildSystemPrompt(sections, workspace, tools.map((tool) => tool.spec)),
        messages,
        tools,
        options: { temperature: request.options?.temperature ?? deps.config.DEFAULT_TEMPERATURE, maxTokens: request.options?.maxTokens },
        wholeLines: request.wholeLines ?? false,
      },
      job,
      gate,
    ).catch((error: unknown) => {
      deps.logger.error({ err: error, streamId: job.id }, 'a generation failed unexpectedly');
      gate.reject(new AppError('STREAMING_ERROR', 'The answer could not be generated'));
      job.discard();
    });
    await gate.promise;
    return job;
  } catch (error) {
    deps.streams.drop(job);
    throw error;
  }
}
