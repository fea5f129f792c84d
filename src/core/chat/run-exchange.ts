import type { ConversationHead, FinalAnswer, StoredAnswer } from '../chat-store/chat-store.js';
import { contextOf, type ConversationContext } from '../context/conversation-context.js';
import { AppError } from '../errors/app-error.js';
import { callModel } from '../providers/call-model.js';
import type { CallOptions, TokenLogprob } from '../providers/call-options.js';
import type { ChatMessage, RawToolCall, StepFinish, StepUsage, ToolCallRecord, ToolResultRecord, ToolSpec } from '../providers/chat-protocol.js';
import type { User } from '../auth/permissions.js';
import type { StreamJob } from '../streams/stream-job.js';
import { AnswerWriter } from './answer-writer.js';
import type { FinishReason, TokenUsage } from './chat-events.js';
import { chatError } from './chat-error.js';
import type { ChatDeps } from './chat-deps.js';
import type { ChatTarget } from './chat-target.js';
import { parseToolArguments, runToolCall, type ChatTool } from './chat-tool.js';
import { EventSink } from './event-sink.js';
import { OutputCap } from './output-cap.js';
import type { StoredToolCall } from './history-window.js';

/** Everything a generation needs, prepared (and validated) before the provider is called. */
export interface PreparedExchange {
  userId: string;
  /** Whose quotas each provider call is checked against and charged to (CONTRACT §13). */
  user: User;
  /** As it was after the question was stored. */
  conversation: ConversationHead;
  target: ChatTarget;
  system: string;
  messages: ChatMessage[];
  tools: ChatTool[];
  /**
   * Tools the caller defined and runs itself (the OpenAI-compatible path): offered to the model,
   * never run here. When the model calls them the exchange ends with finishReason `tool-calls`
   * and the calls, unanswered, go back to the caller.
   */
  callerTools?: readonly ToolSpec[];
  /** `temperature` undefined: none is sent (chat-options.ts decides). */
  options: { temperature: number | undefined; maxTokens?: number | undefined; call?: CallOptions | undefined };
  wholeLines: boolean;
  /** The answer's id when it was chosen before (a regenerated answer, CONTRACT §12). */
  answerId?: string;
  /**
   * Takes back what preparing stored (the question, or a replacement) when the first provider
   * call is refused before it is made (a quota): the model was never asked, so nothing stays.
   */
  takeBack?: () => Promise<void>;
}

/** Settled once: resolved when the provider first answers 2xx, rejected when the exchange fails before. */
export interface ReadyGate {
  resolve(): void;
  reject(error: AppError): void;
  readonly settled: boolean;
}

function finishReasonOf(finish: StepFinish): FinishReason {
  return finish === 'length' ? 'length' : 'stop';
}

function addUsage(total: TokenUsage, usage: StepUsage): void {
  total.inputTokens += usage.inputTokens;
  total.outputTokens += usage.outputTokens;
}

/**
 * Runs one exchange to its end and writes its events into the job (CONTRACT §6, §7): text,
 * tool_call/tool_result pairs, at most one error, then context_update after the answer is stored
 * and exactly one done. The model is called again with the tools' results until it answers
 * without calling any, or MAX_TOOL_STEPS calls were made (finishReason `tool-calls`). A failure
 * before the provider's first 2xx writes nothing: it rejects the gate instead, so the caller can
 * still answer with a plain JSON error.
 */
export async function runExchange(deps: ChatDeps, exchange: PreparedExchange, job: StreamJob, gate: ReadyGate): Promise<void> {
  const started = performance.now();
  const { target } = exchange;
  const sink = new EventSink((event) => {
    job.push(event);
  }, exchange.wholeLines);
  const tools = new Map(exchange.tools.map((tool) => [tool.spec.name, tool]));
  const callerTools = exchange.callerTools ?? [];
  const toolSpecs = [...exchange.tools.map((tool) => tool.spec), ...callerTools];
  const messages = [...exchange.messages];
  let text = '';
  // A holder, not a `let`: the text callback sets it, which control-flow narrowing cannot see.
  const timing: { firstTokenAt: number | null } = { firstTokenAt: null };
  const calls: StoredToolCall[] = [];
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let finishReason: FinishReason = 'stop';
  let failure: AppError | null = null;
  // Whether any provider call was made; the meter refusing the first one (a quota, or the quota
  // store unreachable) means the model was never asked. A holder, for the same reason as `timing`.
  const progress = { called: false };
  const writer = new AnswerWriter(deps.store.chat, exchange.conversation.id, { provider: target.provider, model: target.model }, deps, exchange.answerId);
  const snapshot = () => ({ content: text, toolCalls: calls });
  const grow = () => {
    writer.update(snapshot());
  };
  // The running call's output cap (output-cap.ts), replaced for each provider call.
  let cap = new OutputCap(undefined, job.signal);
  const onText = (delta: string, logprobs?: readonly TokenLogprob[]) => {
    if (!cap.take(delta)) return;
    timing.firstTokenAt ??= performance.now();
    text += delta;
    sink.emit(logprobs === undefined ? { type: 'text', content: delta } : { type: 'text', content: delta, logprobs });
    grow();
  };
  // Tool calls' names and arguments, reasoning: output the provider bills and counts against the
  // limit as it does text, so it is held to the same cap (the calls themselves come with the result).
  const onOutput = (piece: string) => {
    cap.count(piece);
  };
  const onResponse = () => {
    gate.resolve();
  };
  // The caller runs its own tools: each call is announced and stored without a result.
  const handBack = (toolCalls: readonly RawToolCall[]) => {
    for (const call of toolCalls) {
      const args = parseToolArguments(call.argumentsText);
      const stored: StoredToolCall = { id: call.id, name: call.name, params: args.ok ? args.value : args.text };
      calls.push(stored);
      sink.emit({ type: 'tool_call', id: call.id, name: call.name, params: stored.params });
    }
    grow();
  };

  try {
    for (let step = 1; ; step++) {
      const stepTextStart = text.length;
      // The options travel in the reservation too: a response_format schema is prompt the provider bills.
      const call = { model: target.model, system: exchange.system, messages, tools: toolSpecs, options: exchange.options.call };
      // CONTRACT §13: each provider call is checked against the caller's quotas and reserved
      // first (a refusal throws: no call is made), then settled to what it used.
      const metered = await deps.usage.begin({
        user: exchange.user,
        provider: target.provider,
        model: target.model,
        call,
        maxTokens: exchange.options.maxTokens,
        conversationId: exchange.conversation.id,
        answerId: writer.id,
      });
      progress.called = true;
      cap = new OutputCap(metered.maxTokens, job.signal);
      let result: Awaited<ReturnType<typeof callModel>>;
      try {
        result = await callModel(
          // Written out, not spread: an optimised spread gives each call object a hidden class of
          // its own in Node 20, kept for the whole stream (about 0.6 KB a stream, heap snapshots).
          {
            model: call.model,
            system: call.system,
            messages: call.messages,
            tools: call.tools,
            options: call.options,
            temperature: exchange.options.temperature,
            maxTokens: metered.maxTokens,
          },
          {
            provider: target.provider,
            baseUrl: deps.config.providers[target.provider].baseUrl,
            apiKey: target.apiKey,
            signal: cap.signal,
            timeoutMs: deps.config.PROVIDER_TIMEOUT_MS,
            onResponse,
            onText,
            onOutput,
          },
        );
      } catch (error) {
        // Without the provider's count the call is charged what it streamed, tool-call arguments
        // and reasoning included (at most its limit, token-estimate.ts). CONTRACT §13 names no
        // outcome for a call cut at its limit: it is recorded as the abort it is.
        metered.end({ usage: null, text: text.slice(stepTextStart) + cap.unshown, outcome: job.signal.aborted || cap.cut ? 'aborted' : 'failed' });
        // Cut off at its output limit (a provider ignoring it): the answer ends as if it had stopped there.
        if (cap.cut && !job.signal.aborted) {
          finishReason = 'length';
          break;
        }
        throw error;
      }
      // A call that ended without a count (zeros) is charged what it streamed as well: an answer
      // of tool calls alone must not be charged no output (the text is read only then).
      metered.end({ usage: result.usage, text: text.slice(stepTextStart) + cap.unshown, outcome: job.signal.aborted ? 'aborted' : 'completed' });
      addUsage(usage, result.usage);
      if (result.toolCalls.length === 0) {
        finishReason = finishReasonOf(result.finish);
        break;
      }
      if (callerTools.length > 0) {
        handBack(result.toolCalls);
        finishReason = 'tool-calls';
        break;
      }
      const asked: ToolCallRecord[] = [];
      const answered: ToolResultRecord[] = [];
      for (const call of result.toolCalls) {
        // After an abort the calls still to come are not started (nor announced).
        if (job.signal.aborted) break;
        const args = parseToolArguments(call.argumentsText);
        const stored: StoredToolCall = { id: call.id, name: call.name, params: args.ok ? args.value : args.text };
        calls.push(stored);
        sink.emit({ type: 'tool_call', id: call.id, name: call.name, params: stored.params });
        grow();
        stored.result = await runToolCall(tools, call.name, args, job.signal, call.id);
        sink.emit({ type: 'tool_result', id: call.id, name: call.name, result: stored.result });
        grow();
        asked.push({ id: call.id, name: call.name, input: stored.params });
        answered.push({ id: call.id, name: call.name, output: stored.result });
      }
      messages.push({ role: 'assistant', content: text.slice(stepTextStart), toolCalls: asked }, { role: 'tool', results: answered });
      if (step >= deps.config.MAX_TOOL_STEPS) {
        finishReason = 'tool-calls';
        break;
      }
    }
  } catch (error) {
    failure = chatError(error, target.provider);
  }
  if (job.signal.aborted) {
    // The provider request was closed on purpose: whatever it reported on the way is no failure.
    finishReason = 'aborted';
    failure = null;
  }

  if (!gate.settled) {
    // Nothing went out yet: the caller answers with an ordinary error reply. When the very first
    // call was refused before it was made, the model was never asked: the turn is taken back.
    if (failure !== null && !progress.called) await takeBack(deps, exchange);
    gate.reject(
      failure ??
        (finishReason === 'aborted'
          ? new AppError('SERVICE_UNAVAILABLE', 'The service is stopping')
          : chatError(new Error('The provider sent no answer'), target.provider)),
    );
    return;
  }
  sink.flush();
  if (failure) {
    finishReason = 'error';
    sink.emit({ type: 'error', code: failure.code, message: failure.message });
  }
  const stored = await finishStoring(deps, writer, { ...snapshot(), finishReason, usage }, exchange.userId);
  sink.emit({ type: 'context_update', context: contextAfter(deps, exchange, stored) });
  sink.emit({
    type: 'done',
    metadata: {
      conversationId: exchange.conversation.id,
      messageId: stored?.messageId ?? '',
      provider: target.provider,
      model: target.model,
      finishReason,
      usage,
      durationMs: Math.round(performance.now() - started),
      timeToFirstTokenMs: timing.firstTokenAt === null ? null : Math.round(timing.firstTokenAt - started),
    },
  });
}

async function takeBack(deps: ChatDeps, exchange: PreparedExchange): Promise<void> {
  await exchange.takeBack?.().catch((error: unknown) => {
    deps.logger.warn({ err: error }, 'taking back a turn whose first provider call was refused failed');
  });
}

async function finishStoring(deps: ChatDeps, writer: AnswerWriter, answer: FinalAnswer, userId: string): Promise<StoredAnswer | null> {
  try {
    return await writer.finish(answer, userId);
  } catch (error) {
    // The stream still ends properly; the message left marked as streaming is closed as
    // `error` at the next start.
    deps.logger.error({ err: error }, 'storing an answer failed');
    return null;
  }
}

/** The context once the answer is stored; what the exchange knew when storing failed. */
function contextAfter(deps: ChatDeps, exchange: PreparedExchange, stored: StoredAnswer | null): ConversationContext {
  const { conversation, target } = exchange;
  if (stored) return contextOf(stored.context, deps.config, conversation);
  return {
    conversationId: conversation.id,
    messageCount: conversation.messageCount,
    title: conversation.title,
    workspace: null,
    model: { name: target.model, provider: target.provider },
  };
}
