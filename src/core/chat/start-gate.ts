// How many exchanges prepare at once (issue 24, item 4). Preparing an exchange (storing its
// question, reading its history and workspace) is the dearest stretch of its start; when 2,000
// start together, all of them preparing at once fill the event loop, and the events of the
// streams already flowing wait behind it (2,000 slow streams: added gap p99 28–38 ms). Let a few
// prepare at a time and the loop keeps turning between them (15–18 ms, side by side), while the
// streams open as fast (all open after 1.7–2.0 s either way: the work is the same, only spread).
// A preparation that takes long (a large workspace, a busy database) must not hold the others:
// whoever has waited MAX_WAIT_MS goes ahead without a place.

const MAX_PREPARING = 16;
const MAX_WAIT_MS = 1000;

export class StartGate {
  private inside = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly limit = MAX_PREPARING,
    private readonly maxWaitMs = MAX_WAIT_MS,
  ) {}

  /** Runs `prepare` once a place is free (or it has waited maxWaitMs), and frees the place after. */
  async run<T>(prepare: () => Promise<T>): Promise<T> {
    const held = await this.enter();
    try {
      return await prepare();
    } finally {
      if (held) this.leave();
    }
  }

  /** True when a place was taken; false when the wait ran out and it goes ahead without one. */
  private enter(): Promise<boolean> {
    if (this.inside < this.limit) {
      this.inside++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const admit = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.queue.indexOf(admit);
        if (index !== -1) this.queue.splice(index, 1);
        resolve(false);
      }, this.maxWaitMs);
      this.queue.push(admit);
    });
  }

  private leave(): void {
    const next = this.queue.shift();
    // The place passes straight to the next in line; `inside` stays as it is.
    if (next) next();
    else this.inside--;
  }
}

/** The process's gate: every chat path's exchanges prepare through it. */
export const exchangeStarts = new StartGate();
