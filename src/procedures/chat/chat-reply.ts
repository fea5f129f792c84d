import { collectReply } from '../../core/chat/collect-reply.js';
import type { StreamJob } from '../../core/streams/stream-job.js';
import type { ChatReply } from '../schemas/chat.js';

/** The JSON reply of every non-streaming chat path: the job's events collected. */
export async function chatReply(job: StreamJob): Promise<ChatReply> {
  const { response, context, toolCalls, metadata } = await collectReply(job);
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
  };
}

/** What a streaming procedure returns: the REST bridge then writes the job's events as SSE. */
export function streamHandle(job: StreamJob): { streamId: string; after: number } {
  return { streamId: job.id, after: 0 };
}
