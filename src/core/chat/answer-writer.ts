import type { AnswerSnapshot, AnswerTarget, ChatStore, ContextParts, FinalAnswer } from '../chat-store/chat-store.js';
import type { Logger } from '../logger.js';

/** CONTRACT §6: at most one write per 250 ms per stream while it grows. */
export const ANSWER_WRITE_INTERVAL_MS = 250;

export interface StoredAnswer {
  /** "" when the conversation was deleted while the answer was being generated. */
  messageId: string;
  /** What the context_update that follows shows. */
  context: ContextParts;
}

/**
 * Stores an assistant answer as it grows. Its row is made on the first update (the provider has
 * answered by then), marked as streaming, and kept close behind the stream, so a crash loses at
 * most a quarter of a second of it. Writes never overlap: the latest snapshot waits for the one
 * in flight, and intermediate snapshots are skipped.
 */
export class AnswerWriter {
  private row: Promise<string | null> | null = null;
  private latest: AnswerSnapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private lastWriteAt = 0;

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: string,
    // Only the names: a chat target also carries the API key, which must never be stored.
    private readonly target: AnswerTarget,
    private readonly logger: Logger,
  ) {}

  update(snapshot: AnswerSnapshot): void {
    this.latest = snapshot;
    // A failure to make the row surfaces in finish(), which the engine handles.
    this.ensureRow().catch(() => undefined);
    if (this.timer) return;
    const wait = Math.max(0, this.lastWriteAt + ANSWER_WRITE_INTERVAL_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
  }

  /** Stores the whole answer and closes it. */
  async finish(answer: FinalAnswer, userId: string): Promise<StoredAnswer> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.latest = null;
    const messageId = await this.ensureRow();
    await this.inFlight;
    if (messageId === null) return { messageId: '', context: await this.store.readContext(userId, this.conversationId) };
    return { messageId, context: await this.store.closeAnswer(messageId, this.conversationId, userId, answer, this.target) };
  }

  private ensureRow(): Promise<string | null> {
    this.row ??= this.store.openAnswer(this.conversationId, this.target);
    return this.row;
  }

  private flush(): void {
    const snapshot = this.latest;
    if (!snapshot) return;
    this.latest = null;
    this.lastWriteAt = Date.now();
    this.inFlight = this.inFlight
      .then(async () => {
        const messageId = await this.ensureRow();
        if (messageId !== null) await this.store.saveAnswer(messageId, snapshot);
      })
      .catch((error: unknown) => {
        // The final write stores the whole answer anyway; a lost intermediate write only
        // widens what a crash could lose.
        this.logger.warn({ err: error, conversationId: this.conversationId }, 'storing a growing answer failed');
      });
  }
}
