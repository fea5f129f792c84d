/** Refusals audited one by one in each minute before the rest are counted in one entry. */
const PER_MINUTE = 20;
const WINDOW_MS = 60_000;

export interface RefusalEntry {
  destination: string;
  reason: string;
  /** Refusals of this window not written one by one (the entry stands for them). */
  suppressed?: number;
}

/**
 * Each egress refusal is audited with the terminal's user (CONTRACT §11), but a command can make
 * thousands a second; past a few each minute they are counted, and one entry per minute says how
 * many there were, so the audit log records the attempt without becoming the attack.
 */
export class RefusalAudit {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;
  private last: { destination: string; reason: string } | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly write: (entry: RefusalEntry) => void) {}

  refused(destination: string, reason: string): void {
    const now = Date.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.flush();
      this.windowStart = now;
      this.written = 0;
    }
    if (this.written < PER_MINUTE) {
      this.written += 1;
      this.write({ destination, reason });
      return;
    }
    this.suppressed += 1;
    this.last = { destination, reason };
    this.timer ??= setTimeout(() => {
      this.flush();
    }, this.windowStart + WINDOW_MS - now);
    this.timer.unref();
  }

  /** Writes the count of the refusals not yet written (at the end of a window, or of the terminal). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.suppressed === 0 || this.last === null) return;
    this.write({ ...this.last, suppressed: this.suppressed });
    this.suppressed = 0;
  }
}
