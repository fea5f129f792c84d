import { Histogram, type Registry } from 'prom-client';

/** How often the loop is asked to run a timer; each time, how late it ran is one observation. */
const SAMPLE_INTERVAL_MS = 10;

/**
 * `assistant_event_loop_lag_seconds`: how late a timer due every SAMPLE_INTERVAL_MS ran, as a
 * histogram from 1 ms to 10 s. Everything the service does shares one thread, so a late timer is
 * a request kept waiting; a stall of 10 s shows as one observation of 10 s. prom-client's default
 * `nodejs_eventloop_lag_*` gauges keep only percentiles since start, which cannot be summed over
 * a time window or across instances; buckets can.
 */
export class EventLoopLag {
  private readonly lag: Histogram;
  private timer: NodeJS.Timeout | undefined;
  private due = 0;

  constructor(registry: Registry) {
    this.lag = new Histogram({
      name: 'assistant_event_loop_lag_seconds',
      help: `How late a timer due every ${SAMPLE_INTERVAL_MS} ms ran on the event loop (a request waits as long)`,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    this.schedule();
  }

  /** Ends the sampling (the service's stop); nothing is observed afterwards. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.due = performance.now() + SAMPLE_INTERVAL_MS;
    // unref: the sampling alone never keeps a process alive.
    this.timer = setTimeout(this.tick, SAMPLE_INTERVAL_MS).unref();
  }

  private readonly tick = (): void => {
    if (this.timer === undefined) return;
    this.lag.observe(Math.max(0, performance.now() - this.due) / 1000);
    this.schedule();
  };
}
