import { collectReply } from '../../core/chat/collect-reply.js';
import type { StreamJob } from '../../core/streams/stream-job.js';
import type { StreamRegistry } from '../../core/streams/stream-registry.js';
import type { ChatReply } from '../schemas/chat.js';

/** The JSON reply of every non-streaming chat path: the job's events collected. */
export async function chatReply(job: StreamJob): Promise<ChatReply> {
  const { response, context, toolCalls, metadata, logprobs } = await collectReply(job);
  return {
    success: true,
    response,
    context,
    conversation_id: metadata.conversationId,
    conversationId: metadata.conversationId,
    model: metadata.model,
    provider: metadata.provider,
    toolCalls,
    metadata,
    ...(logprobs.length > 0 ? { logprobs } : {}),
  };
}

/**
 * What a streaming procedure returns: the transport (REST's SSE, /ws, a tRPC subscription) then
 * reads the job by its id and writes its events. The job is handed over so that this first read
 * finds it even when the provider failed right after its 2xx and the job has already finished.
 */
export function streamHandle(streams: StreamRegistry, job: StreamJob): { streamId: string; after: number } {
  streams.handOver(job);
  return { streamId: job.id, after: 0 };
}
