import type { Message } from '../../generated/sqlite/client.js';
import { appendMessage, finishAnswer, updateAnswer, type AnswerUpdate, type FinalAnswer } from '../conversations/append-message.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';

/** CONTRACT §6: at most one write per 250 ms per stream while it grows. */
export const ANSWER_WRITE_INTERVAL_MS = 250;

/**
 * Stores an assistant answer as it grows. Its row is made on the first update (the provider has
 * answered by then), marked as streaming, and kept close behind the stream, so a crash loses at
 * most a quarter of a second of it. Writes never overlap: the latest snapshot waits for the one
 * in flight, and intermediate snapshots are skipped.
 */
export class AnswerWriter {
  private row: Promise<Message> | null = null;
  private latest: AnswerUpdate | null = null;
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private lastWriteAt = 0;

  constructor(
    private readonly store: Store,
    private readonly conversationId: string,
    private readonly target: { provider: string; model: string },
    private readonly logger: Logger,
  ) {}

  update(snapshot: AnswerUpdate): void {
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

  /** Stores the whole answer and closes it; returns the message id. */
  async finish(answer: FinalAnswer): Promise<string> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.latest = null;
    const row = await this.ensureRow();
    await this.inFlight;
    await finishAnswer(this.store, row, answer, this.target);
    return row.id;
  }

  private ensureRow(): Promise<Message> {
    this.row ??= appendMessage(this.store, this.conversationId, {
      role: 'assistant',
      content: '',
      ...this.target,
      streaming: true,
    });
    return this.row;
  }

  private flush(): void {
    const snapshot = this.latest;
    if (!snapshot) return;
    this.latest = null;
    this.lastWriteAt = Date.now();
    this.inFlight = this.inFlight
      .then(async () => updateAnswer(this.store, (await this.ensureRow()).id, snapshot))
      .catch((error: unknown) => {
        // The final write stores the whole answer anyway; a lost intermediate write only
        // widens what a crash could lose.
        this.logger.warn({ err: error, conversationId: this.conversationId }, 'storing a growing answer failed');
      });
  }
}
