import { request, type Agent } from 'node:http';

// One slow stream as the concurrent-streams benchmark reads it: a POST whose SSE reply carries the
// text chunks of bench/streams-upstream.ts (`<index>@<epoch ms emitted> `), either straight from
// the upstream (Chat Completions chunks) or through the service (CONTRACT §6 events). For every
// chunk it keeps when the upstream emitted it and when it arrived here; whatever goes wrong on the
// way is the stream's failure.

export type StreamReply = 'openai' | 'service';

export interface SlowStreamTarget {
  url: string;
  body: string;
  reply: StreamReply;
  /** Text chunks the upstream was asked for; fewer (or more) is a failure. */
  chunks: number;
}

export interface StreamRecord {
  /** Null when the stream ended properly with every chunk in order. */
  failure: string | null;
  /** When the response headers arrived, in ms after the request was sent. */
  headersMs: number | null;
  /** Per text chunk, epoch ms: when the upstream wrote it, and when its bytes arrived here. */
  emitted: number[];
  received: number[];
}

export interface StreamHooks {
  /** The 200 and its headers arrived. */
  onOpen(): void;
  /** The stream is over, whichever way (called once, also for streams that never opened). */
  onClose(): void;
}

// Epoch milliseconds with sub-millisecond precision, as the upstream stamps its chunks.
const now = () => performance.timeOrigin + performance.now();
// The upstream's stamp, inside a Chat Completions `content` or a service `text` event alike.
const stamp = /(\d+)@(\d+\.\d+)/g;

/** Reads one stream to its end; never rejects. `signal` ends it early, as a failure. */
export function readSlowStream(agent: Agent, target: SlowStreamTarget, hooks: StreamHooks, signal: AbortSignal): Promise<StreamRecord> {
  return new Promise((resolve) => {
    const record: StreamRecord = { failure: null, headersMs: null, emitted: [], received: [] };
    const sent = performance.now();
    let settled = false;
    let opened = false;
    const settle = (failure: string | null) => {
      if (settled) return;
      settled = true;
      record.failure ??= failure;
      signal.removeEventListener('abort', onAbort);
      hooks.onClose();
      resolve(record);
    };
    const req = request(target.url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(target.body) },
    });
    const onAbort = () => {
      req.destroy();
      settle('not over when the benchmark stopped waiting');
    };
    signal.addEventListener('abort', onAbort, { once: true });

    req.on('response', (res) => {
      record.headersMs = performance.now() - sent;
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (piece: string) => (body += piece));
        res.on('end', () => {
          settle(`HTTP ${res.statusCode ?? 0} ${body.slice(0, 120)}`);
        });
        return;
      }
      opened = true;
      hooks.onOpen();
      let pending = '';
      let ended = false;
      const onLine = (line: string, arrivedAt: number) => {
        if (!line.startsWith('data: ') || record.failure !== null) return;
        if (target.reply === 'openai' ? line === 'data: [DONE]' : line.includes('"type":"done"')) {
          ended = true;
          if (target.reply === 'service') {
            const finishReason = (JSON.parse(line.slice(6)) as { metadata?: { finishReason?: string } }).metadata?.finishReason;
            if (finishReason !== 'stop') record.failure = `done with finishReason ${finishReason ?? 'missing'}`;
          }
          return;
        }
        if (target.reply === 'service' && line.includes('"type":"error"')) {
          record.failure = `error event ${line.slice(6, 200)}`;
          return;
        }
        for (const match of line.matchAll(stamp)) {
          if (Number(match[1]) !== record.emitted.length) {
            record.failure = `chunk ${match[1] ?? ''} arrived where chunk ${record.emitted.length} was due`;
            return;
          }
          record.emitted.push(Number(match[2]));
          record.received.push(arrivedAt);
        }
      };
      res.on('data', (piece: string) => {
        // One arrival time for every event in this read: they reached the client together.
        const arrivedAt = now();
        const lines = (pending + piece).split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) onLine(line, arrivedAt);
      });
      res.on('end', () => {
        if (!ended) settle('the stream ended without its end (`[DONE]` or `done`)');
        else if (record.emitted.length !== target.chunks) settle(`${record.emitted.length} of ${target.chunks} chunks`);
        else settle(null);
      });
      res.on('error', (error) => {
        settle(`response: ${error.message}`);
      });
      // After `end` this changes nothing; without it, the connection went before the body ended.
      res.on('close', () => {
        settle('the connection closed before the body ended');
      });
    });
    req.on('error', (error) => {
      settle(`${opened ? 'response' : 'request'}: ${error.message}`);
    });
    req.end(target.body);
  });
}
