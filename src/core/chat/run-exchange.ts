import { stepCountIs, streamText, type FinishReason as SdkFinishReason, type LanguageModelUsage, type ModelMessage, type ToolSet } from 'ai';
import type { Conversation, Prisma } from '../../generated/sqlite/client.js';
import type { FinalAnswer } from '../conversations/append-message.js';
import { buildContext, type ConversationContext } from '../context/conversation-context.js';
import { AppError } from '../errors/app-error.js';
import type { StreamJob } from '../streams/stream-job.js';
import { AnswerWriter } from './answer-writer.js';
import type { FinishReason, TokenUsage } from './chat-events.js';
import { chatError } from './chat-error.js';
import type { ChatDeps } from './chat-deps.js';
import type { ChatTarget } from './chat-target.js';
import { EventSink } from './event-sink.js';
import type { StoredToolCall } from './history-window.js';
import { createLanguageModel } from './language-model.js';
import { createProviderFetch } from './provider-fetch.js';

/** Everything a generation needs, prepared (and validated) before the provider is called. */
export interface PreparedExchange {
  userId: string;
  conversation: Conversation;
  target: ChatTarget;
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  options: { temperature: number; maxTokens?: number | undefined };
  wholeLines: boolean;
}

/** Settled once: resolved when the provider first answers 2xx, rejected when the exchange fails before. */
export interface ReadyGate {
  resolve(): void;
  reject(error: AppError): void;
  readonly settled: boolean;
}

function finishReasonOf(reason: SdkFinishReason): FinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool-calls':
      return 'tool-calls';
    case 'error':
      return 'error';
    default:
      return 'stop';
  }
}

/**
 * Ollama's native API reads sampling settings from `options` (it ignores top-level ones), so
 * temperature and the token limit are passed there as well.
 */
function ollamaOptions(exchange: PreparedExchange): { ollama: { options: Record<string, number> } } | undefined {
  if (exchange.target.provider !== 'ollama') return undefined;
  const { temperature, maxTokens } = exchange.options;
  return { ollama: { options: { temperature, ...(maxTokens === undefined ? {} : { num_predict: maxTokens }) } } };
}

function unreadableAnswer(provider: string): AppError {
  return new AppError('MODEL_UNAVAILABLE', `${provider} sent an answer that could not be read to its end`, {
    details: { provider, reason: 'malformed' },
  });
}

function addUsage(total: TokenUsage, usage: LanguageModelUsage): void {
  total.inputTokens += usage.inputTokens ?? 0;
  total.outputTokens += usage.outputTokens ?? 0;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'string' && error !== '' ? error : 'The tool failed';
}

/**
 * Runs one exchange to its end and writes its events into the job (CONTRACT §6): text,
 * tool_call/tool_result pairs, at most one error, then context_update after the answer is stored
 * and exactly one done. A failure before the provider's first 2xx writes nothing: it rejects the
 * gate instead, so the caller can still answer with a plain JSON error.
 */
export async function runExchange(deps: ChatDeps, exchange: PreparedExchange, job: StreamJob, gate: ReadyGate): Promise<void> {
  const started = performance.now();
  const { target } = exchange;
  const sink = new EventSink((event) => {
    job.push(event);
  }, exchange.wholeLines);
  const providerFetch = createProviderFetch({ timeoutMs: deps.config.PROVIDER_TIMEOUT_MS, onSuccessResponse: () => {
      gate.resolve();
    },
  });
  let text = '';
  let firstTokenAt: number | null = null;
  const calls = new Map<string, StoredToolCall>();
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let finishReason: FinishReason = 'stop';
  let failure: AppError | null = null;
  const writer = new AnswerWriter(deps.store, exchange.conversation.id, { provider: target.provider, model: target.model }, deps.logger);
  const snapshot = () => ({ content: text, toolCalls: [...calls.values()] as unknown as Prisma.InputJsonValue[] });
  const grow = () => {
    writer.update(snapshot());
  };

  try {
    const result = streamText({
      model: createLanguageModel(target, deps.config.providers, providerFetch),
      system: exchange.system,
      messages: exchange.messages,
      tools: exchange.tools,
      stopWhen: stepCountIs(deps.config.MAX_TOOL_STEPS),
      temperature: exchange.options.temperature,
      ...(exchange.options.maxTokens === undefined ? {} : { maxOutputTokens: exchange.options.maxTokens }),
      providerOptions: ollamaOptions(exchange),
      abortSignal: job.signal,
      // The contract maps each upstream failure once; retries would hide it and delay aborts.
      maxRetries: 0,
      onError: () => undefined,
    });
    for await (const part of result.fullStream) {
      switch (part.type) {
        case 'text-delta':
          if (part.text === '') break;
          firstTokenAt ??= performance.now();
          text += part.text;
          sink.emit({ type: 'text', content: part.text });
          grow();
          break;
        case 'tool-call':
          calls.set(part.toolCallId, { id: part.toolCallId, name: part.toolName, params: part.input });
          sink.emit({ type: 'tool_call', id: part.toolCallId, name: part.toolName, params: part.input });
          grow();
          break;
        case 'tool-result':
        case 'tool-error': {
          const result: unknown = part.type === 'tool-result' ? part.output : { error: errorMessage(part.error) };
          const call = calls.get(part.toolCallId);
          if (call) call.result = result;
          sink.emit({ type: 'tool_result', id: part.toolCallId, name: part.toolName, result });
          grow();
          break;
        }
        case 'finish-step':
          addUsage(usage, part.usage);
          break;
        case 'finish':
          finishReason = finishReasonOf(part.finishReason);
          // Ollama's client reports a stream that ended without its final `done` line (cut or
          // unreadable NDJSON) as an `other` finish with no raw reason, not as an error.
          if (part.finishReason === 'other' && part.rawFinishReason === undefined) failure ??= unreadableAnswer(target.provider);
          break;
        case 'error':
          failure ??= chatError(part.error, target.provider);
          break;
        case 'abort':
          finishReason = 'aborted';
          break;
        default:
          break;
      }
    }
  } catch (error) {
    failure ??= chatError(error, target.provider);
  }
  if (job.signal.aborted) {
    // The provider request was closed on purpose: whatever it reported on the way is no failure.
    finishReason = 'aborted';
    failure = null;
  }

  if (!gate.settled) {
    // Nothing went out yet: the caller answers with an ordinary error reply.
    gate.reject(
      failure ??
        (finishReason === 'aborted'
          ? new AppError('SERVICE_UNAVAILABLE', 'The service is stopping')
          : chatError(new Error('The provider sent no answer'), target.provider)),
    );
    return;
  }
  if (failure) {
    finishReason = 'error';
    sink.emit({ type: 'error', code: failure.code, message: failure.message });
  }
  sink.flush();
  const messageId = await finishStoring(deps, writer, { ...snapshot(), finishReason, usage });
  sink.emit({ type: 'context_update', context: await contextAfter(deps, exchange) });
  sink.emit({
    type: 'done',
    metadata: {
      conversationId: exchange.conversation.id,
      messageId,
      provider: target.provider,
      model: target.model,
      finishReason,
      usage,
      durationMs: Math.round(performance.now() - started),
      timeToFirstTokenMs: firstTokenAt === null ? null : Math.round(firstTokenAt - started),
    },
  });
}

async function finishStoring(deps: ChatDeps, writer: AnswerWriter, answer: FinalAnswer): Promise<string> {
  try {
    return await writer.finish(answer);
  } catch (error) {
    // The stream still ends properly; the message left marked as streaming is closed as
    // `error` at the next start.
    deps.logger.error({ err: error }, 'storing an answer failed');
    return '';
  }
}

async function contextAfter(deps: ChatDeps, exchange: PreparedExchange): Promise<ConversationContext> {
  const { conversation, userId, target } = exchange;
  try {
    const fresh = await deps.store.db.conversation.findUnique({ where: { id: conversation.id } });
    return await buildContext(deps.store, deps.config, userId, fresh ?? conversation);
  } catch (error) {
    deps.logger.warn({ err: error }, 'reading the context after an answer failed');
    return {
      conversationId: conversation.id,
      messageCount: conversation.messageCount,
      title: conversation.title,
      workspace: null,
      model: { name: target.model, provider: target.provider },
    };
  }
}
