import type { AnswerSnapshot, AnswerTarget, ChatStore, FinalAnswer, StoredAnswer } from '../chat-store/chat-store.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';

/** CONTRACT §6: at most one write per 250 ms per stream while it grows. */
export const ANSWER_WRITE_INTERVAL_MS = 250;

/**
 * Stores an assistant answer as it grows: at most every 250 ms, the first time 250 ms after the
 * generation started, so a crash loses at most a quarter of a second of it. An answer that is
 * whole before then (most are) is stored once, whole, by finish(); a longer one gets its row,
 * marked as streaming, at its first write. Writes never overlap: the latest snapshot waits for
 * the one in flight, and intermediate snapshots are skipped.
 */
export class AnswerWriter {
  private row: Promise<string | null> | null = null;
  private latest: AnswerSnapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private lastWriteAt = Date.now();

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: string,
    // Only the names: a chat target also carries the API key, which must never be stored.
    private readonly target: AnswerTarget,
    private readonly logger: Logger,
    // Chosen up front: a regenerated answer is named by what it replaces (CONTRACT §12).
    private readonly answerId: string = newId(),
  ) {}

  /** The answer's message id (what crash recovery reads an interrupted answer's length by). */
  get id(): string {
    return this.answerId;
  }

  update(snapshot: AnswerSnapshot): void {
    this.latest = snapshot;
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
    await this.inFlight;
    // A row that could not be made (its write failed) is made now, whole.
    const messageId = this.row ? await this.row.catch(() => null) : null;
    return this.store.closeAnswer(messageId, this.conversationId, userId, answer, this.target, this.answerId);
  }

  private flush(): void {
    const snapshot = this.latest;
    if (!snapshot) return;
    this.latest = null;
    this.lastWriteAt = Date.now();
    this.inFlight = this.inFlight
      .then(async () => {
        if (this.row === null) {
          this.row = this.store.openAnswer(this.conversationId, this.target, snapshot, this.answerId);
          await this.row;
          return;
        }
        const messageId = await this.row;
        if (messageId !== null) await this.store.saveAnswer(messageId, snapshot);
      })
      .catch((error: unknown) => {
        // The final write stores the whole answer anyway; a lost intermediate write only
        // widens what a crash could lose.
        this.logger.warn({ err: error, conversationId: this.conversationId }, 'storing a growing answer failed');
      });
  }
}
