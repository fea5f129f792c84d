import type { Response } from 'express';
import { CompletionChunks } from '../../core/openai-compatible/completion-chunks.js';
import type { CompletionIdentity } from '../../core/openai-compatible/completion-object.js';
import { StreamJob, type FollowableStream } from '../../core/streams/stream-job.js';
import { writeEventStream } from '../../realtime/sse-writer.js';

/**
 * Writes a job as OpenAI's chunk stream, with the service's own SSE writer (CONTRACT §6): the 200
 * goes out only after the provider answered, the reader is followed at its own pace, and a
 * `: ping` comment keeps proxies from closing a quiet stream. /v1 has no resume (CONTRACT §12):
 * OpenAI's clients cancel a completion by closing its stream, so a reader that leaves before the
 * end (or is cut when its token expires) aborts the generation, stored as `aborted`.
 */
export async function writeCompletionStream(
  res: Response,
  job: FollowableStream,
  chunks: { identity: CompletionIdentity; includeUsage: boolean; pingIntervalMs: number },
): Promise<void> {
  const translator = new CompletionChunks(chunks.identity, chunks.includeUsage);
  try {
    await writeEventStream(res, job, 0, chunks.pingIntervalMs, {
      // The provider has answered already: the headers and the role chunk go out at once.
      opening: translator.opening(),
      render: (batch) => {
        let text = '';
        for (const { event } of batch) text += translator.translate(event);
        return text;
      },
    });
  } finally {
    // The writer returns before `done` only when its reader has gone.
    if (job instanceof StreamJob && job.running) job.abort('client');
  }
}
