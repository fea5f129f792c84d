import { setTimeout as sleep } from 'node:timers/promises';
import type { Exchange } from './fake-server.js';
import { replyFor, type AnsweringScript, type ChatReply, type Script } from './scripts.js';

/** One piece of a streamed body; `text` marks the frames that carry a scripted text chunk. */
export interface Frame {
  data: string;
  text?: boolean;
}

/** How one provider puts a reply on the wire; the script kinds themselves are played here, once. */
export interface ChatDialect {
  streamContentType: string;
  streamFrames(reply: ChatReply): Frame[];
  completeBody(reply: ChatReply): unknown;
  errorBody(status: number): unknown;
  /**
   * The provider's own report of a failure inside a stream it started with 200: the error it
   * gives `status` (an HTTP status) when given, else its usual overload / server error.
   */
  streamErrorFrame(status?: number): string;
  /** Bodies for `malformed`: right content type, unparsable content. */
  malformedStream: string;
  malformedBody: string;
}

export async function playScript(exchange: Exchange, script: Script, dialect: ChatDialect, stream: boolean): Promise<void> {
  const { res } = exchange;
  switch (script.kind) {
    case 'refuse':
      exchange.destroy();
      return;
    case 'stall':
      // Nothing is written; the socket stays open until the client aborts or close() destroys it.
      return;
    case 'fail': {
      const raw = typeof script.body === 'string' ? script.body : undefined;
      const contentType = raw === undefined ? 'application/json' : 'text/plain; charset=utf-8';
      res.writeHead(script.status, { 'content-type': contentType, ...script.headers });
      res.end(raw ?? JSON.stringify(script.body ?? dialect.errorBody(script.status)));
      return;
    }
    case 'malformed':
      if (stream) {
        res.writeHead(200, streamHeaders(dialect));
        if (script.headersFirst === true) {
          res.flushHeaders();
          // A write of its own, after the headers have left: the client sees the 2xx first.
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        res.end(dialect.malformedStream);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(dialect.malformedBody);
      }
      return;
    case 'text':
    case 'tools':
    case 'cut':
    case 'reset':
    case 'streamError':
    case 'stallMidStream': {
      const reply = replyFor(script);
      const ending = endingOf(script);
      if (stream) await writeStream(exchange, dialect, reply, ending);
      else if (script.kind === 'streamError') res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(dialect.errorBody(500)));
      else if (script.kind !== 'stallMidStream') await writeComplete(exchange, dialect, reply, script.kind === 'cut' || script.kind === 'reset');
      return;
    }
  }
}

/** How a stream that stops early stops: after how many text chunks, and then what. */
interface EarlyEnding {
  after: number;
  then: 'cut' | 'reset' | 'error' | 'stall';
  /** For `error`: which error the provider reports (see ChatDialect.streamErrorFrame). */
  status?: number;
}

function endingOf(script: AnsweringScript): EarlyEnding | undefined {
  switch (script.kind) {
    case 'cut':
      return { after: script.after, then: 'cut' };
    case 'reset':
      return { after: script.after, then: 'reset' };
    case 'streamError':
      return { after: script.after, then: 'error', status: script.status };
    case 'stallMidStream':
      return { after: script.after, then: 'stall' };
    default:
      return undefined;
  }
}

function streamHeaders(dialect: ChatDialect) {
  return { 'content-type': dialect.streamContentType, 'cache-control': 'no-cache' };
}

async function writeStream(exchange: Exchange, dialect: ChatDialect, reply: ChatReply, ending: EarlyEnding | undefined) {
  const { res } = exchange;
  const frames = dialect.streamFrames(reply);
  const end = ending === undefined ? frames.length : cutIndex(frames, ending.after);
  res.writeHead(200, streamHeaders(dialect));
  // Sends the headers now, as real providers do, so the client's fetch resolves before the first chunk.
  res.flushHeaders();
  let textSent = 0;
  for (const frame of frames.slice(0, end)) {
    if (frame.text === true && textSent++ > 0 && !(await pause(reply.chunkDelayMs, exchange.signal))) return;
    if (!(await write(exchange, frame.data))) return;
  }
  if (ending === undefined) {
    res.end();
    return;
  }
  if (ending.then === 'error') {
    res.end(dialect.streamErrorFrame(ending.status));
    return;
  }
  // Silence: the socket stays open until the client aborts or close() destroys it.
  if (ending.then === 'stall') return;
  // No grace for the client: the reset follows as soon as the chunks have left for the kernel
  // (the write callback), so it may still overtake what the client has not read yet.
  if (ending.then === 'reset') {
    await sent(exchange);
    exchange.reset();
    return;
  }
  // A client's fetch drops whatever it has not read yet when the socket fails, so the cut waits
  // until the chunks it promised have had time to arrive, as they would have on a real network.
  if (await pause(Math.max(reply.chunkDelayMs, cutGraceMs), exchange.signal)) exchange.destroy();
}

const cutGraceMs = 30;

/** The frame index to stop before: right after the `after`-th text frame, or at the first one when `after` is 0. */
function cutIndex(frames: Frame[], after: number): number {
  let seen = 0;
  for (let index = 0; index < frames.length; index++) {
    if (frames[index]?.text !== true) continue;
    if (seen === after) return index;
    seen++;
  }
  // Fewer text chunks than `after`: stop after the last one, still before the stream's proper ending.
  const lastText = frames.findLastIndex((frame) => frame.text === true);
  return lastText === -1 ? frames.length : lastText + 1;
}

async function writeComplete(exchange: Exchange, dialect: ChatDialect, reply: ChatReply, cut: boolean) {
  // A non-streaming model still takes the time its chunks would have taken.
  if (!(await pause(reply.chunkDelayMs * Math.max(0, reply.chunks.length - 1), exchange.signal))) return;
  const body = Buffer.from(JSON.stringify(dialect.completeBody(reply)));
  exchange.res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  if (!cut) {
    exchange.res.end(body);
    return;
  }
  // The declared length promises more than arrives, so the client sees a truncated body, not a short one.
  if (await write(exchange, body.subarray(0, Math.floor(body.length / 2)))) exchange.destroy();
}

/** Resolves once everything written so far has been handed to the socket (or the connection closed). */
function sent(exchange: Exchange): Promise<void> {
  return new Promise((resolve) => {
    if (exchange.signal.aborted) {
      resolve();
      return;
    }
    // An empty write's callback runs after the writes queued before it.
    exchange.res.write('', () => {
      resolve();
    });
  });
}

/** Waits, unless the connection closes first; returns whether it is still worth writing. */
export async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms > 0) {
    try {
      await sleep(ms, undefined, { signal });
    } catch {
      return false;
    }
  }
  return !signal.aborted;
}

/** Writes with backpressure; returns false when the connection closed instead of draining. */
async function write(exchange: Exchange, data: string | Buffer): Promise<boolean> {
  const { res, signal } = exchange;
  if (signal.aborted) return false;
  if (res.write(data)) return true;
  return new Promise((resolve) => {
    const done = (drained: boolean) => {
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onAbort);
      resolve(drained);
    };
    const onDrain = () => {
      done(true);
    };
    const onAbort = () => {
      done(false);
    };
    res.once('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
