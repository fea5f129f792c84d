// A provider call's output held to the limit it was sent (CONTRACT §13): the reservation of a
// call counts on the provider stopping at its `max_tokens`/`num_predict`, and one that ignores it
// (a misbehaving server, a model whose template drops the option) would otherwise overshoot a
// token or cost quota by as much as it likes. Each text delta a provider streams carries at least
// one token, so the deltas counted are a lower bound of the output: once they pass the limit
// (with a little slack, for a provider that splits a token's bytes over two deltas) the call is
// cut off, and the meter charges it its worst case, at most the limit (token-estimate.ts).

/** Deltas allowed past the limit before the call is cut: a split token must not end an honest answer. */
function slackOf(limit: number): number {
  return 8 + Math.ceil(limit / 10);
}

export class OutputCap {
  private readonly controller = new AbortController();
  private deltas = 0;
  /** The signal the provider call is made with: the job's, or this cap's once it cut the call. */
  readonly signal: AbortSignal;

  constructor(
    private readonly limit: number | undefined,
    jobSignal: AbortSignal,
  ) {
    this.signal = limit === undefined ? jobSignal : AbortSignal.any([jobSignal, this.controller.signal]);
  }

  /**
   * Counts a streamed delta and says whether to keep it: false from the one past the limit on,
   * the call then being cut off (the rest of a network chunk already read is dropped as well).
   */
  take(delta: string): boolean {
    if (this.limit === undefined || delta === '') return true;
    if (this.controller.signal.aborted) return false;
    this.deltas++;
    if (this.deltas <= this.limit + slackOf(this.limit)) return true;
    this.controller.abort();
    return false;
  }

  /** Whether this cap (not the job) ended the call. */
  get cut(): boolean {
    return this.controller.signal.aborted;
  }
}
