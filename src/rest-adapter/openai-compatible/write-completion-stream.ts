import { once } from 'node:events';
import type { Response } from 'express';
import { CompletionChunks } from '../../core/openai-compatible/completion-chunks.js';
import type { CompletionIdentity } from '../../core/openai-compatible/completion-object.js';
import type { FollowableStream } from '../../core/streams/stream-job.js';

/**
 * Writes a job as OpenAI's chunk stream. As with the service's own SSE replies (CONTRACT §6),
 * the 200 goes out only after the provider answered, the reader is followed at its own pace
 * (waiting for the socket to drain, never buffering), a `: ping` comment keeps proxies from
 * closing a quiet stream, and a reader that leaves stops only this writer: the generation runs
 * to its end and is stored.
 */
export async function writeCompletionStream(
  res: Response,
  job: FollowableStream,
  chunks: { identity: CompletionIdentity; includeUsage: boolean; pingIntervalMs: number },
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('X-Accel-Buffering', 'no');
  res.setHeader('X-Stream-Id', job.id);
  res.setHeader('Connection', 'keep-alive');
  res.socket?.setNoDelay(true);

  const gone = new AbortController();
  res.on('close', () => {
    gone.abort();
  });
  const ping = setInterval(() => {
    if (!res.writableEnded) res.write(': ping\n\n');
  }, chunks.pingIntervalMs);
  const translator = new CompletionChunks(chunks.identity, chunks.includeUsage);
  // The provider has answered already: the headers and the role chunk go out at once.
  res.write(translator.opening());
  try {
    for await (const batch of job.followInBatches(0, gone.signal)) {
      if (gone.signal.aborted) break;
      let text = '';
      for (const { event } of batch) text += translator.translate(event);
      if (text !== '' && !res.write(text)) await once(res, 'drain', { signal: gone.signal }).catch(() => undefined);
    }
  } finally {
    clearInterval(ping);
    if (!res.writableEnded) res.end();
  }
}
