import { once } from 'node:events';
import type { Response } from 'express';
import type { ChatEvent } from '../core/chat/chat-events.js';
import type { FollowableStream } from '../core/streams/stream-job.js';

/** How a stream's events are written as SSE text: the contract's format, or OpenAI's chunks. */
export interface EventStreamFormat {
  /** Written with the headers, before any event (OpenAI's role chunk). */
  opening?: string;
  /** The text for a batch of events; '' writes nothing. */
  render(batch: readonly { seq: number; event: ChatEvent }[]): string;
}

/** CONTRACT §6: `id: <streamId>:<seq>`, one `data:` line, a blank line. */
function contractFormat(streamId: string): EventStreamFormat {
  return {
    render: (batch) => {
      let text = '';
      for (const { seq, event } of batch) text += `id: ${streamId}:${seq}\ndata: ${JSON.stringify(event)}\n\n`;
      return text;
    },
  };
}

/** Writes a job's events in the contract's SSE format, after event `after`. */
export function writeSse(res: Response, job: FollowableStream, after: number, pingIntervalMs: number): Promise<void> {
  return writeEventStream(res, job, after, pingIntervalMs, contractFormat(job.id));
}

/**
 * Writes a job's events as Server-Sent Events in `format`, with a `: ping` comment at each
 * interval. The reader is followed at its own pace: when the socket's buffer is full we wait for
 * it to drain instead of buffering the stream in memory, and the job (which never waits for
 * readers) keeps every event for a replay. A reader that leaves stops only this writer, never the
 * generation.
 */
export async function writeEventStream(res: Response, job: FollowableStream, after: number, pingIntervalMs: number, format: EventStreamFormat): Promise<void> {
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
  // A reader that left while the provider was still to answer closed the reply already: its
  // `close` will not come again, and a write to it never drains.
  if (res.destroyed) gone.abort();
  const ping = setInterval(() => {
    if (!res.writableEnded) res.write(': ping\n\n');
  }, pingIntervalMs);
  if (format.opening !== undefined) res.write(format.opening);
  // The headers go out with the first events when the provider's first chunk is already here
  // (one write instead of two), and on their own when the stream has to wait for it.
  const flushHeadersSoon = setImmediate(() => {
    if (!res.headersSent) res.flushHeaders();
  });
  try {
    for await (const batch of job.followInBatches(after, gone.signal)) {
      if (gone.signal.aborted) break;
      const text = format.render(batch);
      if (text !== '' && !res.write(text)) await once(res, 'drain', { signal: gone.signal }).catch(() => undefined);
    }
  } finally {
    clearImmediate(flushHeadersSoon);
    clearInterval(ping);
    if (!res.writableEnded) res.end();
  }
}

/** The position a reconnecting client names: `Last-Event-ID: <streamId>:<seq>` (or a bare seq). */
export function seqFromLastEventId(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = /^(?:[0-9a-f-]+:)?(\d{1,9})$/i.exec(header.trim());
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
