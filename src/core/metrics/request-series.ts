import type { Counter, Histogram } from 'prom-client';

type RequestLabels = 'method' | 'route' | 'status';
type DurationLabels = 'method' | 'route';

interface MethodSeries {
  duration: Histogram.Internal<DurationLabels>;
  byStatus: Map<number, Counter.Internal>;
}

/**
 * The per-request counter and histogram, with each label combination's child looked up once and
 * then kept: prom-client hashes a label object on every `inc`/`observe`, which a request path
 * taken thousands of times a second need not pay. Nested maps, so a lookup builds no key string.
 * Growth is bounded by the labels themselves (route templates, HTTP methods, statuses).
 */
export class RequestSeries {
  private readonly routes = new Map<string, Map<string, MethodSeries>>();

  constructor(
    private readonly requests: Counter<RequestLabels>,
    private readonly durations: Histogram<DurationLabels>,
  ) {}

  record(method: string, route: string, status: number, seconds: number): void {
    let methods = this.routes.get(route);
    if (!methods) {
      methods = new Map();
      this.routes.set(route, methods);
    }
    let series = methods.get(method);
    if (!series) {
      series = { duration: this.durations.labels({ method, route }), byStatus: new Map() };
      methods.set(method, series);
    }
    let counter = series.byStatus.get(status);
    if (!counter) {
      counter = this.requests.labels({ method, route, status: String(status) });
      series.byStatus.set(status, counter);
    }
    counter.inc();
    series.duration.observe(seconds);
  }
}
