/** Something a wheel calls once, when its time has come. */
export interface WheelEntry {
  fire(): void;
}

/**
 * One timer for many deadlines that need no finer precision than `granularityMs` (answer writes,
 * SSE pings): an entry is filed under the slot its deadline falls in, and one interval, running
 * only while something is filed, fires each slot's entries once its time has passed. With 2,000
 * streams this replaces thousands of Timeout objects a second (each answer write and ping was a
 * timer of its own) by one, and the entries of a slot run in one turn.
 *
 * An entry never fires early; it fires at most one granularity (plus the event loop's lag) late.
 */
export class TimerWheel {
  private readonly slots = new Map<number, Set<WheelEntry>>();
  private readonly slotOf = new Map<WheelEntry, number>();
  private ticker: NodeJS.Timeout | null = null;
  /** The last slot whose entries were fired. */
  private done = 0;

  constructor(private readonly granularityMs: number) {}

  /** Entries waiting to fire. */
  get size(): number {
    return this.slotOf.size;
  }

  has(entry: WheelEntry): boolean {
    return this.slotOf.has(entry);
  }

  /** Files `entry` to fire `delayMs` from now (moved there if it was filed already). */
  schedule(entry: WheelEntry, delayMs: number): void {
    this.remove(entry);
    const now = performance.now();
    if (this.ticker === null) {
      this.done = this.slotAt(now) - 1;
      // Unref'd: a pending write or ping never keeps a stopping process alive by itself (its
      // socket or its exchange does, for as long as they matter).
      this.ticker = setInterval(() => {
        this.tick();
      }, this.granularityMs).unref();
    }
    // Rounded up: the slot starting after the deadline, so nothing fires early.
    const slot = Math.max(this.done + 1, Math.ceil((now + Math.max(0, delayMs)) / this.granularityMs));
    let entries = this.slots.get(slot);
    if (entries === undefined) {
      entries = new Set();
      this.slots.set(slot, entries);
    }
    entries.add(entry);
    this.slotOf.set(entry, slot);
  }

  cancel(entry: WheelEntry): void {
    this.remove(entry);
    this.stopWhenEmpty();
  }

  private remove(entry: WheelEntry): void {
    const slot = this.slotOf.get(entry);
    if (slot === undefined) return;
    this.slotOf.delete(entry);
    const entries = this.slots.get(slot);
    entries?.delete(entry);
    if (entries?.size === 0) this.slots.delete(slot);
  }

  private slotAt(time: number): number {
    return Math.floor(time / this.granularityMs);
  }

  private tick(): void {
    const now = this.slotAt(performance.now());
    // After a long block the passed slots are many: walk whichever is shorter, them or the map.
    if (now - this.done > this.slots.size) {
      const due = [...this.slots.keys()].filter((slot) => slot <= now).sort((a, b) => a - b);
      this.done = now;
      for (const slot of due) this.fireSlot(slot);
    } else {
      while (this.done < now) this.fireSlot(++this.done);
    }
    this.stopWhenEmpty();
  }

  private fireSlot(slot: number): void {
    const entries = this.slots.get(slot);
    if (entries === undefined) return;
    this.slots.delete(slot);
    for (const entry of entries) {
      this.slotOf.delete(entry);
      try {
        entry.fire();
      } catch (error) {
        // One entry's failure must not cost the others their turn; it surfaces as an uncaught
        // error would have from a timer of its own.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  private stopWhenEmpty(): void {
    if (this.slotOf.size > 0 || this.ticker === null) return;
    clearInterval(this.ticker);
    this.ticker = null;
  }
}

/**
 * The wheel the streams share (answer writes, SSE pings): 25 ms is well under the 250 ms between
 * an answer's writes and the seconds between pings, and 40 wake-ups a second while streams run.
 */
export const streamTimers = new TimerWheel(25);
