import type { ChatEvent } from '../chat/chat-events.js';
import type { ProviderName } from '../config/env-schema.js';

export interface SequencedEvent {
  /** 1-based position in the stream; SSE ids are `<streamId>:<seq>`. */
  seq: number;
  event: ChatEvent;
}

/** What a reader needs of a stream, whether it runs here or on another instance. */
export interface FollowableStream {
  readonly id: string;
  readonly ownerId: string;
  readonly provider: ProviderName;
  follow(after: number, signal?: AbortSignal): AsyncGenerator<SequencedEvent>;
  followInBatches(after: number, signal?: AbortSignal): AsyncGenerator<readonly SequencedEvent[]>;
  /** The sequence number of its `done` once it has ended, else null (a reader past it gets 204). */
  doneSeq(): Promise<number | null>;
  /** A stream of this instance, which a reader can follow by a direct call (see LiveStream). */
  readonly live?: LiveStream;
}

/**
 * A stream followed by a listener instead of a generator: for each batch of events a reader
 * costs one call, where followInBatches() costs a Promise, a generator's resumption and the
 * microtasks between them. What a writer at its socket's pace needs: it reads what it has not
 * sent when it is ready, and is told when there is more.
 */
export interface LiveStream {
  /** The last sequence number written so far. */
  readonly lastSeq: number;
  /** False once the job has finished: nothing will follow its last event. */
  readonly running: boolean;
  /** The events after `after` (a new array; empty when there are none). */
  eventsAfter(after: number): readonly SequencedEvent[];
  /**
   * Calls `listener` after new events were pushed (once for all those pushed in one run of
   * code) and once when the job finishes. Returns the unsubscribe.
   */
  subscribe(listener: () => void): () => void;
}

export type AbortCause = 'client' | 'shutdown';

/** An event as a job keeps it: a plain text event as its text, any other as it is. */
type LoggedEvent = ChatEvent | string;

/** The event a log entry stands for (a text event's object made again, as the engine made it). */
function eventOf(entry: LoggedEvent): ChatEvent {
  return typeof entry === 'string' ? { type: 'text', content: entry } : entry;
}

/**
 * What a job costs to keep for replays, roughly: the job itself, each event's objects, its text
 * twice over (UTF-16). Measured: a finished 20-chunk exchange holds about 4.2 KB of heap.
 */
const JOB_BYTES = 1024;
function approximateBytes(event: ChatEvent): number {
  switch (event.type) {
    case 'text':
      // Log probabilities, when asked for, outweigh the text they describe.
      return 96 + event.content.length * 2 + (event.logprobs ? JSON.stringify(event.logprobs).length * 2 : 0);
    case 'context_update':
    case 'done':
      return 512;
    case 'tool_call':
    case 'tool_result':
    case 'error':
      // A tool's arguments or result can be large (a file written or read): measured, not guessed.
      return 128 + JSON.stringify(event).length * 2;
  }
}

/**
 * One running (or finished) generation: the events it produced, in order, kept so that any number
 * of readers can replay from a position and then follow live. The generation itself never waits
 * for a reader, so a client that leaves does not stop it (CONTRACT §6); a slow reader only falls
 * behind in the log.
 */
export class StreamJob implements FollowableStream, LiveStream {
  /**
   * The events in order; event i has sequence number i + 1. Kept bare, without a {seq, event}
   * pair each: a stream holds its whole log for replays, and readers get the pairs made for them.
   * A plain text event (no log probabilities), nearly every event of a stream, is kept as its
   * text alone (LoggedEvent): 40 B less each for as long as the stream is kept.
   */
  private readonly log: LoggedEvent[] = [];
  /** Readers told of every change (LiveStream). */
  private readonly listeners = new Set<() => void>();
  /** Generators waiting for the next change: each is told once, then waits anew. */
  private waiters: (() => void)[] = [];
  /** Whether a change is already to be told (once per run of code, whatever it pushed). */
  private changeQueued = false;
  private ended: Promise<void> | null = null;
  private resolveEnded: (() => void) | null = null;
  private readonly controller = new AbortController();
  private finishedAt: number | null = null;
  private abortCause: AbortCause | null = null;
  private bytes = JOB_BYTES;

  constructor(
    readonly id: string,
    readonly ownerId: string,
    readonly provider: ProviderName,
    /** Called once, when the job has finished (its `done` is in the log, or it was discarded). */
    private readonly onFinish: (job: StreamJob) => void = () => undefined,
  ) {}

  /** Aborted by the abort endpoint or at shutdown; the generation then closes its provider request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get live(): LiveStream {
    return this;
  }

  get running(): boolean {
    return this.finishedAt === null;
  }

  get finishedSince(): number | null {
    return this.finishedAt;
  }

  get abortedBy(): AbortCause | null {
    return this.abortCause;
  }

  /** The last sequence number written so far (0 before the first event). */
  get lastSeq(): number {
    return this.log.length;
  }

  /** The `done` event's metadata once the job has it. */
  get doneMetadata(): Extract<ChatEvent, { type: 'done' }>['metadata'] | null {
    const last = this.log.at(-1);
    return typeof last === 'object' && last.type === 'done' ? last.metadata : null;
  }

  doneSeq(): Promise<number | null> {
    return Promise.resolve(this.doneMetadata ? this.lastSeq : null);
  }

  /** Roughly what the log holds in memory. */
  get approximateBytes(): number {
    return this.bytes;
  }

  abort(cause: AbortCause): void {
    if (!this.running || this.controller.signal.aborted) return;
    this.abortCause = cause;
    this.controller.abort(new Error(`aborted by ${cause}`));
  }

  push(event: ChatEvent): void {
    if (!this.running) return;
    this.log.push(event.type === 'text' && event.logprobs === undefined ? event.content : event);
    this.bytes += approximateBytes(event);
    if (event.type === 'done') this.finish();
    this.changed();
  }

  /** Ends a job that could not produce its `done` (it failed before its provider answered). */
  discard(): void {
    if (this.finishedAt === null) this.finish();
    this.changed();
  }

  private finish(): void {
    this.finishedAt = Date.now();
    this.onFinish(this);
    this.resolveEnded?.();
  }

  eventsAfter(after: number): readonly SequencedEvent[] {
    const from = Math.max(0, after);
    const batch: SequencedEvent[] = [];
    for (let index = from; index < this.log.length; index++) batch.push({ seq: index + 1, event: eventOf(this.log[index] as LoggedEvent) });
    return batch;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Every event after `after`, then the live ones, until `done`; stops early when `signal` aborts. */
  async *follow(after: number, signal?: AbortSignal): AsyncGenerator<SequencedEvent> {
    for await (const batch of this.followInBatches(after, signal)) yield* batch;
  }

  /**
   * As follow(), but every event already in the log comes at once: a writer then sends all the
   * events one provider chunk produced in one write instead of one write each.
   */
  async *followInBatches(after: number, signal?: AbortSignal): AsyncGenerator<readonly SequencedEvent[]> {
    let next = Math.max(0, after);
    // One abort listener for the whole follow, not one per wait.
    let wake: (() => void) | null = null;
    const onAbort = () => {
      if (wake === null) return;
      const index = this.waiters.indexOf(wake);
      if (index !== -1) this.waiters.splice(index, 1);
      wake();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (next < this.log.length) {
          const batch = this.eventsAfter(next);
          next = this.log.length;
          yield batch;
          continue;
        }
        if (!this.running || signal?.aborted) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
          this.waiters.push(resolve);
        });
        wake = null;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Resolves when the job has finished (its `done` is in the log, or it was discarded). */
  finished(): Promise<void> {
    if (!this.running) return Promise.resolve();
    this.ended ??= new Promise<void>((resolve) => {
      this.resolveEnded = resolve;
    });
    return this.ended;
  }

  /**
   * Tells the readers once for everything pushed in this run of code, in a microtask: the
   * events one provider chunk produced reach each reader as one batch (one socket write).
   */
  private changed(): void {
    if (this.changeQueued) return;
    if (this.listeners.size === 0 && this.waiters.length === 0) return;
    this.changeQueued = true;
    queueMicrotask(this.tell);
  }

  private readonly tell = (): void => {
    this.changeQueued = false;
    const waiters = this.waiters;
    if (waiters.length > 0) {
      this.waiters = [];
      for (const wake of waiters) wake();
    }
    for (const listener of this.listeners) listener();
  };
}
