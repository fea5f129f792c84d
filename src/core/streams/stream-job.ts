import type { ChatEvent } from '../chat/chat-events.js';
import type { ProviderName } from '../config/env-schema.js';

export interface SequencedEvent {
  /** 1-based position in the stream; SSE ids are `<streamId>:<seq>`. */
  seq: number;
  event: ChatEvent;
}

export type AbortCause = 'client' | 'shutdown';

/**
 * One running (or finished) generation: the events it produced, in order, kept so that any number
 * of readers can replay from a position and then follow live. The generation itself never waits
 * for a reader, so a client that leaves does not stop it (CONTRACT §6); a slow reader only falls
 * behind in the log.
 */
export class StreamJob {
  private readonly log: SequencedEvent[] = [];
  private readonly wakers = new Set<() => void>();
  private readonly controller = new AbortController();
  private finishedAt: number | null = null;
  private abortCause: AbortCause | null = null;

  constructor(
    readonly id: string,
    readonly ownerId: string,
    readonly provider: ProviderName,
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

  abort(cause: AbortCause): void {
    if (!this.running || this.controller.signal.aborted) return;
    this.abortCause = cause;
    this.controller.abort(new Error(`aborted by ${cause}`));
  }

  push(event: ChatEvent): void {
    if (!this.running) return;
    this.log.push({ seq: this.log.length + 1, event });
    if (event.type === 'done') this.finishedAt = Date.now();
    this.wake();
  }

  /** Ends a job that could not produce its `done` (it failed before its provider answered). */
  discard(): void {
    if (this.finishedAt === null) this.finishedAt = Date.now();
    this.wake();
  }

  /** Every event after `after`, then the live ones, until `done`; stops early when `signal` aborts. */
  async *follow(after: number, signal?: AbortSignal): AsyncGenerator<SequencedEvent> {
    let next = Math.max(0, after);
    for (;;) {
      while (next < this.log.length) {
        const entry = this.log[next++];
        if (entry) yield entry;
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
