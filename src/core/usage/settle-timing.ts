/**
 * When the usage meter's next settle runs. A call that holds a reservation is settled at the next
 * turn: its reservation counts its worst case against the caller's quota until then, and a client
 * near its limit asking again at once must find it released. A call that holds none (no limit
 * applies to its caller) only needs its ledger row, so it waits `delayMs` for others to share the
 * transaction: a sequential client otherwise paid a commit per exchange.
 */
export class SettleTiming {
  private waiting: { urgent: boolean; go: () => void; timer: NodeJS.Timeout | undefined } | null = null;

  constructor(private readonly delayMs: number) {}

  /**
   * The moment the next settle may run, as a promise; null when a settle is already waiting, which
   * the call joins (made urgent first if this call holds a reservation).
   */
  next(urgent: boolean): Promise<void> | null {
    const waiting = this.waiting;
    if (waiting) {
      if (urgent && !waiting.urgent) {
        waiting.urgent = true;
        clearTimeout(waiting.timer);
        setImmediate(waiting.go);
      }
      return null;
    }
    return new Promise<void>((resolve) => {
      const entry = {
        urgent,
        go: () => {
          // A settle that runs takes every call queued so far; the next call waits for a new one.
          if (this.waiting === entry) this.waiting = null;
          resolve();
        },
        timer: undefined as NodeJS.Timeout | undefined,
      };
      if (urgent) setImmediate(entry.go);
      else entry.timer = setTimeout(entry.go, this.delayMs);
      this.waiting = entry;
    });
  }
}
