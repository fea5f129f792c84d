import type { AnswerSnapshot, AnswerTarget, ChatStore, FinalAnswer, StoredAnswer } from '../chat-store/chat-store.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { streamTimers, type WheelEntry } from '../streams/timer-wheel.js';

/** CONTRACT §6: at most one write per 250 ms per stream while it grows. */
export const ANSWER_WRITE_INTERVAL_MS = 250;

/**
 * What all growing answers together write per second before each one's interval widens. A write
 * of a growing answer re-indexed its whole text for the conversation search (100–300 µs of the
 * event loop on SQLite, BENCHMARKS.md "Issue 24, item 4"); since the search_growing_answers
 * migration an answer is indexed once, when it is whole, and a rewrite costs tens of µs. At 2,000
 * streams the 250 ms interval would still make 8,000 writes a second, and at 2,000 a second the
 * gap the streams' events saw while all were open doubled (p99 15 → 23–57 ms, side by side):
 * up to 125 answers growing at once keep 250 ms; 2,000 get 4 s.
 */
const ANSWER_WRITES_PER_SECOND = 500;
/** However many streams run, a crash loses at most this much of an answer. */
const MAX_ANSWER_WRITE_INTERVAL_MS = 4000;

/** Growing answers with a write waiting on the wheel: in a steady load, the answers growing. */
let waitingWrites = 0;

/**
 * The interval between one answer's writes when `growing` answers are being written. CONTRACT §6
 * says at most one write per 250 ms: this is never less, and widens only when more answers grow
 * at once than ANSWER_WRITES_PER_SECOND allows at 250 ms, so the writes of all of them together
 * stay within that rate (trading a longer stretch a crash could lose for an event loop that keeps
 * up with the streams).
 */
export function answerWriteInterval(growing: number): number {
  return Math.min(MAX_ANSWER_WRITE_INTERVAL_MS, Math.max(ANSWER_WRITE_INTERVAL_MS, Math.ceil((growing * 1000) / ANSWER_WRITES_PER_SECOND)));
}

/**
 * Stores an assistant answer as it grows: at most every 250 ms (longer when very many grow at
 * once, see answerWriteInterval), the first time 250 ms after the generation started, so a crash
 * loses at most a quarter of a second of it (the widened interval under such a load). An answer
 * that is whole before then (most are) is stored once, whole, by finish(); a longer one gets its
 * row, marked as streaming, at its first write. Writes never overlap: the latest snapshot waits
 * for the one in flight, and intermediate snapshots are skipped. The waits are entries on the
 * streams' shared timer wheel, not a timer each.
 */
export class AnswerWriter {
  private row: Promise<string | null> | null = null;
  private latest: AnswerSnapshot | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  private lastWriteAt = performance.now();
  /** Whether `due` is on the wheel (a field, not a lookup: update() runs for every chunk). */
  private scheduled = false;
  private readonly due: WheelEntry = {
    fire: () => {
      this.scheduled = false;
      waitingWrites--;
      this.flush();
    },
  };

  constructor(
    private readonly store: ChatStore,
    private readonly conversationId: string,
    // Only the names: a chat target also carries the API key, which must never be stored.
    private readonly target: AnswerTarget,
    // Read only when a write fails: a request's logger is made on first use (procedures/context.ts).
    private readonly log: { readonly logger: Logger },
    // Chosen up front: a regenerated answer is named by what it replaces (CONTRACT §12).
    private readonly answerId: string = newId(),
  ) {}

  /** The answer's message id (what crash recovery reads an interrupted answer's length by). */
  get id(): string {
    return this.answerId;
  }

  update(snapshot: AnswerSnapshot): void {
    this.latest = snapshot;
    if (this.scheduled) return;
    const interval = answerWriteInterval(waitingWrites + 1);
    this.scheduled = true;
    waitingWrites++;
    streamTimers.schedule(this.due, this.lastWriteAt + interval - performance.now());
  }

  /** Stores the whole answer and closes it. */
  async finish(answer: FinalAnswer, userId: string): Promise<StoredAnswer> {
    if (this.scheduled) {
      this.scheduled = false;
      streamTimers.cancel(this.due);
      waitingWrites--;
    }
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
    this.lastWriteAt = performance.now();
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
        this.log.logger.warn({ err: error, conversationId: this.conversationId }, 'storing a growing answer failed');
      });
  }
}
