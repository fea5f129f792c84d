import type { ConversationContext } from '../context/conversation-context.js';
import { AppError } from '../errors/app-error.js';
import type { TokenLogprob } from '../providers/call-options.js';
import type { StreamJob } from '../streams/stream-job.js';
import type { DoneMetadata } from './chat-events.js';

export interface ToolActivity {
  id: string;
  name: string;
  params: unknown;
  result?: unknown;
}

export interface CollectedReply {
  response: string;
  context: ConversationContext;
  toolCalls: ToolActivity[];
  metadata: DoneMetadata;
  /** The answer's token log probabilities, when they were asked for (empty otherwise). */
  logprobs: TokenLogprob[];
}

/**
 * The non-streaming replies are the same events collected (CONTRACT §6). A failure inside the
 * stream becomes the mapped error reply; the partial answer is already stored as `error`.
 */
export async function collectReply(job: StreamJob): Promise<CollectedReply> {
  let response = '';
  let context: ConversationContext | undefined;
  let failure: AppError | undefined;
  const logprobs: TokenLogprob[] = [];
  const toolCalls = new Map<string, ToolActivity>();
  // In batches: every event one provider chunk produced is taken in one step.
  for await (const batch of job.followInBatches(0)) {
    for (const { event } of batch) {
      switch (event.type) {
        case 'text':
          response += event.content;
          if (event.logprobs) logprobs.push(...event.logprobs);
          break;
        case 'tool_call':
          toolCalls.set(event.id, { id: event.id, name: event.name, params: event.params });
          break;
        case 'tool_result': {
          const call = toolCalls.get(event.id);
          if (call) call.result = event.result;
          break;
        }
        case 'error':
          failure = new AppError(event.code, event.message);
          break;
        case 'context_update':
          context = event.context;
          break;
        case 'done':
          if (failure) throw failure;
          if (!context) throw new AppError('STREAMING_ERROR', 'The answer ended without its context');
          return { response, context, toolCalls: [...toolCalls.values()], metadata: event.metadata, logprobs };
      }
    }
  }
  throw failure ?? new AppError('STREAMING_ERROR', 'The answer ended before it was complete');
}
