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
}

export type AbortCause = 'client' | 'shutdown';

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
export class StreamJob implements FollowableStream {
  private readonly log: SequencedEvent[] = [];
  private readonly wakers = new Set<() => void>();
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
    const last = this.log.at(-1)?.event;
    return last?.type === 'done' ? last.metadata : null;
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
    this.log.push({ seq: this.log.length + 1, event });
    this.bytes += approximateBytes(event);
    if (event.type === 'done') this.finish();
    this.wake();
  }

  /** Ends a job that could not produce its `done` (it failed before its provider answered). */
  discard(): void {
    if (this.finishedAt === null) this.finish();
    this.wake();
  }

  private finish(): void {
    this.finishedAt = Date.now();
    this.onFinish(this);
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
    for (;;) {
      if (next < this.log.length) {
        const batch = this.log.slice(next);
        next = this.log.length;
        yield batch;
        continue;
      }
      if (!this.running || signal?.aborted) return;
      await this.nextChange(signal);
    }
  }

  /** Resolves when the job has finished (its `done` is in the log, or it was discarded). */
  async finished(): Promise<void> {
    while (this.running) await this.nextChange();
  }

  private nextChange(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.wakers.delete(wake);
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.wakers.add(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }

  private wake(): void {
    for (const wake of [...this.wakers]) wake();
  }
}
