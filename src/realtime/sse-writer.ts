import { once } from 'node:events';
import type { Response } from 'express';
import type { ChatEvent } from '../core/chat/chat-events.js';
import type { FollowableStream, LiveStream } from '../core/streams/stream-job.js';
import { streamTimers, type WheelEntry } from '../core/streams/timer-wheel.js';

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

  // The pings are entries on the streams' shared timer wheel: one timer for every open stream
  // instead of an interval each.
  const ping: WheelEntry = {
    fire: () => {
      if (res.writableEnded) return;
      res.write(': ping\n\n');
      streamTimers.schedule(ping, pingIntervalMs);
    },
  };
  streamTimers.schedule(ping, pingIntervalMs);
  if (format.opening !== undefined) res.write(format.opening);
  // The headers go out with the first events when the provider's first chunk is already here
  // (one write instead of two), and on their own when the stream has to wait for it.
  // Forgotten once it has run: the writer's frame lives as long as the stream, and a run
  // Immediate still links to the others that ran in its turn (Node leaves its list pointers set).
  let flushHeadersSoon: NodeJS.Immediate | undefined = setImmediate(() => {
    flushHeadersSoon = undefined;
    if (!res.headersSent) res.flushHeaders();
  });
  try {
    // A stream of this instance is followed by a direct call per batch; one of another instance
    // (read from Redis) through its generator.
    if (job.live) await followLive(res, job.live, after, format);
    else await followInBatches(res, job, after, format);
  } finally {
    clearImmediate(flushHeadersSoon);
    streamTimers.cancel(ping);
    if (!res.writableEnded) res.end();
  }
}

/**
 * Writes the events after `after` as the job pushes them: the job calls `pump` once per batch of
 * events (no Promise, generator or abort listener per event), and `pump` writes what the socket
 * takes, then waits for `drain` before it writes more. Resolves once `done` is written or the
 * reader has gone.
 */
function followLive(res: Response, live: LiveStream, after: number, format: EventStreamFormat): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let next = Math.max(0, after);
    let draining = false;
    let stopped = false;
    let unsubscribe = (): void => undefined;
    const stop = (error?: unknown) => {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      res.off('close', onClose);
      res.off('drain', onDrain);
      if (error === undefined) resolve();
      else reject(error instanceof Error ? error : new Error('Writing the stream failed', { cause: error }));
    };
    const pump = () => {
      if (stopped || draining) return;
      try {
        // A reply closed under us (a reset socket) refuses the write (false): the loop stops there.
        while (next < live.lastSeq) {
          const batch = live.eventsAfter(next);
          next += batch.length;
          const text = format.render(batch);
          if (text !== '' && !res.write(text)) {
            draining = true;
            return;
          }
        }
      } catch (error) {
        // Called by the job for all its readers: a failure here ends this reader alone.
        stop(error);
        return;
      }
      if (!live.running) stop();
    };
    const onDrain = () => {
      draining = false;
      pump();
    };
    const onClose = () => {
      stop();
    };
    res.on('close', onClose);
    res.on('drain', onDrain);
    // A reader that left while the provider was still to answer closed the reply already: its
    // `close` will not come again, and a write to it never drains.
    if (res.destroyed) {
      stop();
      return;
    }
    unsubscribe = live.subscribe(pump);
    pump();
  });
}

/** The same through the stream's generator, for a stream that is not this instance's. */
async function followInBatches(res: Response, job: FollowableStream, after: number, format: EventStreamFormat): Promise<void> {
  const gone = new AbortController();
  const onClose = () => {
    gone.abort();
  };
  res.on('close', onClose);
  if (res.destroyed) gone.abort();
  try {
    for await (const batch of job.followInBatches(after, gone.signal)) {
      if (gone.signal.aborted) break;
      const text = format.render(batch);
      if (text !== '' && !res.write(text)) await once(res, 'drain', { signal: gone.signal }).catch(() => undefined);
    }
  } finally {
    res.off('close', onClose);
  }
}

/** The position a reconnecting client names: `Last-Event-ID: <streamId>:<seq>` (or a bare seq). */
export function seqFromLastEventId(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = /^(?:[0-9a-f-]+:)?(\d{1,9})$/i.exec(header.trim());
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
