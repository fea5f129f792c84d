// A provider call's output held to the limit it was sent (CONTRACT §13): the reservation of a
// call counts on the provider stopping at its `max_tokens`/`num_predict`, and one that ignores it
// (a misbehaving server, a model whose template drops the option) would otherwise overshoot a
// token or cost quota by as much as it likes. Every piece of output a provider streams counts the
// same way, whatever it is: the answer's text, a tool call's name or argument fragments, the
// reasoning of a thinking model (chat-protocol.ts OutputSink), since the provider counts all of
// it against the limit and bills it. Each non-empty piece carries at least one token, and no
// token is longer than LONGEST_TOKEN_BYTES, so the tokens counted are a lower bound of the output:
// once they pass the limit (with a little slack, for a provider that splits a token's bytes over
// two pieces) the call is cut off, and the meter charges it its worst case, at most the limit
// (token-estimate.ts).

/**
 * More bytes than any token holds. The longest tokens of OpenAI's vocabularies (gpt2, p50k,
 * cl100k, o200k: runs of spaces or of mojibake) are 128 bytes, measured with js-tiktoken's ranks;
 * twice that leaves room for other models' vocabularies. A piece longer than this is more than
 * one token: a provider that sends its output in a few huge pieces is counted by their size.
 */
const LONGEST_TOKEN_BYTES = 256;

/** Tokens allowed past the limit before the call is cut: a split token must not end an honest answer. */
function slackOf(limit: number): number {
  return 8 + Math.ceil(limit / 10);
}

/**
 * The fewest tokens a piece of output can be. Its UTF-16 length is at most its UTF-8 byte count
 * (one unit for one to three bytes, two for four), so this never counts more than it holds.
 */
function tokensAtLeast(piece: string): number {
  return Math.max(1, Math.ceil(piece.length / LONGEST_TOKEN_BYTES));
}

export class OutputCap {
  private readonly controller = new AbortController();
  private tokens = 0;
  private unshownOutput = '';
  /** The signal the provider call is made with: the job's, or this cap's once it cut the call. */
  readonly signal: AbortSignal;

  constructor(
    private readonly limit: number | undefined,
    jobSignal: AbortSignal,
  ) {
    this.signal = limit === undefined ? jobSignal : AbortSignal.any([jobSignal, this.controller.signal]);
  }

  /**
   * Counts a streamed text delta and says whether to keep it: false from the one past the limit
   * on, the call then being cut off (the rest of a network chunk already read is dropped as well).
   */
  take(delta: string): boolean {
    if (this.limit === undefined || delta === '') return true;
    if (this.controller.signal.aborted) return false;
    this.tokens += tokensAtLeast(delta);
    if (this.tokens <= this.limit + slackOf(this.limit)) return true;
    // Dropped, but streamed all the same: the worst case counts it (one huge first piece must
    // not leave a cut call charged nothing).
    this.keep(delta);
    this.controller.abort();
    return false;
  }

  /**
   * Counts a piece of output that is not the answer's text (a tool call's name or arguments,
   * reasoning) exactly as a text delta, and keeps it for the call's worst case (`unshown`).
   */
  count(piece: string): void {
    if (this.take(piece)) this.keep(piece);
  }

  /**
   * The output streamed but not shown as text (other output, the delta that crossed the limit),
   * for the meter's worst case when the provider gives no count (a cut, an abort, a failure, a
   * call that ended with none): a call that streamed only tool-call arguments is not charged as
   * if it had streamed nothing. With a limit, at most its first `limit` characters: at least
   * `limit` bytes, all the worst case can charge.
   */
  get unshown(): string {
    return this.unshownOutput;
  }

  private keep(piece: string): void {
    if (this.limit === undefined) {
      this.unshownOutput += piece;
      return;
    }
    const room = this.limit - this.unshownOutput.length;
    if (room > 0) this.unshownOutput += piece.length <= room ? piece : piece.slice(0, room);
  }

  /** Whether this cap (not the job) ended the call. */
  get cut(): boolean {
    return this.controller.signal.aborted;
  }
}
