import type { Actor } from '../auth/actor.js';
import type { ChatSetup, ConversationHead, RecordedQuestion } from '../chat-store/chat-store.js';
import { forgetReplacement, replaceTurn } from '../chat-store/replace-turn.js';
import { defaultTitle } from '../conversations/conversation-views.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { CallOptions } from '../providers/call-options.js';
import type { ChatMessage } from '../providers/chat-protocol.js';
import type { StreamJob } from '../streams/stream-job.js';
import { describeWorkspace } from '../workspaces/describe-workspace.js';
import type { ChatDeps } from './chat-deps.js';
import { temperatureFor } from './chat-options.js';
import type { ChatTarget } from './chat-target.js';
import { toolsForMode, type ChatMode } from './chat-tools.js';
import { toChatMessages } from './history-window.js';
import { choosePromptSections, type PromptOrderSelection } from './prompt-order-choice.js';
import { launchExchange } from './launch-exchange.js';
import { buildSystemPrompt } from './system-prompt.js';
import { forgetQuestion } from './forget-question.js';

export interface ChatRequest {
  actor: Actor;
  target: ChatTarget;
  /** What the chat store read for this request (ChatStore.readSetup). */
  setup: ChatSetup;
  message: string;
  mode: ChatMode;
  conversationId?: string | undefined;
  promptOrders?: PromptOrderSelection;
  options?: { temperature?: number | undefined; maxTokens?: number | undefined; call?: CallOptions | undefined } | undefined;
  /** The markdown streams: text events end on line boundaries. */
  wholeLines?: boolean;
  /** A streaming path: a held run_command pauses the generation until it is decided (CONTRACT §12). */
  streaming?: boolean;
  /** CONTRACT §12: answer the last question again, or replace a question (and all after it) with `message`. */
  replace?: { kind: 'regenerate' } | { kind: 'edit'; messageId: string } | undefined;
}

/**
 * The conversation the message goes to (CONTRACT §7): the named one (another user's or an unknown
 * one → 404), else the caller's current one; null when a new current one is to be made.
 */
function chosenConversation(setup: ChatSetup, userId: string, named: string | undefined): ConversationHead | null {
  const own = setup.conversation?.ownerId === userId ? setup.conversation : null;
  if (named !== undefined && own === null) throw AppError.notFound('Conversation');
  return own;
}

/**
 * Starts a generation as a job (CONTRACT §6, §7) and resolves once the provider has answered 2xx,
 * so every earlier failure (unknown conversation or prompt order, the stream cap, the provider
 * refusing, failing or timing out) is still a plain error for the caller. The user message is
 * stored before the model is called and the answered conversation becomes current.
 */
export async function startChat(deps: ChatDeps, request: ChatRequest): Promise<StreamJob> {
  const userId = request.actor.user.id;
  const conversation = chosenConversation(request.setup, userId, request.conversationId);
  const sections = choosePromptSections(request.setup.promptSections, request.promptOrders);
  // A regenerate that fails before the provider answers replaced nothing: the old answer is put back.
  // A holder, not a `let`: the callback sets it, which control-flow narrowing cannot see.
  const undo: { regenerate: (() => Promise<void>) | null } = { regenerate: null };
  try {
    return await launchExchange(deps, { userId, provider: request.target.provider }, async () => {
      const recorded = await storeTurn(deps, request, conversation);
      if (request.replace?.kind === 'regenerate' && conversation !== null) {
        undo.regenerate = () => forgetReplacement(deps.store, conversation.id, { supersededBy: recorded.answerId ?? '', questionId: null });
      }
      const active = request.setup.workspace;
      const workspace = await describeWorkspace(deps, active);
      // A missing or tampered workspace (CONTRACT §11) gets no tools: nothing runs in it.
      const usable = active !== null && workspace !== null && workspace.status !== 'missing' && workspace.status !== 'error';
      const tools = toolsForMode(request.mode, usable ? { deps, actor: request.actor, workspace: active, pauseForApproval: request.streaming ?? false } : null);
      const messages: ChatMessage[] = [...toChatMessages(recorded.history, tools.length > 0), { role: 'user', content: recorded.question }];
      return {
        userId,
        user: request.actor.user,
        takeBack: recorded.takeBack,
        conversation: recorded.conversation,
        target: request.target,
        system: buildSystemPrompt(sections, workspace, tools.map((tool) => tool.spec)),
        messages,
        tools,
        options: {
          temperature: temperatureFor(request.target.provider, request.options?.temperature, deps.config),
          maxTokens: request.options?.maxTokens,
          call: request.options?.call,
        },
        wholeLines: request.wholeLines ?? false,
        ...(recorded.answerId === undefined ? {} : { answerId: recorded.answerId }),
      };
    });
  } catch (error) {
    if (undo.regenerate !== null) {
      await undo.regenerate().catch((undoError: unknown) => {
        deps.logger.warn({ err: undoError }, 'putting back an answer a failed regenerate replaced failed');
      });
    }
    throw error;
  }
}

/**
 * Stores the turn before the model is called: the new question, or (regenerate, edit) what it
 * replaces marked superseded. An Idempotency-Key attempt learns how to take it back.
 */
async function storeTurn(
  deps: ChatDeps,
  request: ChatRequest,
  conversation: ConversationHead | null,
): Promise<RecordedQuestion & { question: string; answerId?: string; takeBack: () => Promise<void> }> {
  const userId = request.actor.user.id;
  const { replace } = request;
  if (replace !== undefined) {
    if (conversation === null) throw AppError.notFound('Conversation');
    const turn = await replaceTurn(deps.store, {
      userId,
      conversationId: conversation.id,
      replacement: replace.kind === 'regenerate' ? replace : { ...replace, content: request.message },
      historyLimit: deps.config.MAX_CONVERSATION_HISTORY,
    });
    const takeBack = () => forgetReplacement(deps.store, conversation.id, turn);
    deps.attempt?.stored(takeBack);
    return { ...turn, takeBack };
  }
  const untitled = conversation === null || conversation.title === '';
  const questionId = newId();
  const recorded = await deps.store.chat.recordQuestion({
    id: questionId,
    userId,
    conversationId: conversation?.id ?? null,
    content: request.message,
    defaultTitle: untitled ? defaultTitle([{ role: 'user', content: request.message }]) : '',
    historyLimit: deps.config.MAX_CONVERSATION_HISTORY,
  });
  // Deleted between the read and the write.
  if (!recorded) throw AppError.notFound('Conversation');
  const takeBack = () =>
    forgetQuestion(deps.store, { userId, conversationId: recorded.conversation.id, questionId, madeConversation: conversation === null, tookTitle: untitled });
  deps.attempt?.stored(takeBack);
  return { ...recorded, question: request.message, takeBack };
}
