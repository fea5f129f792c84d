/**
 * Label values that come from callers (a model name is whatever a chat body names and a provider
 * accepts) would give Prometheus one series per value without end. The first `max` distinct
 * values keep their name; every later one is counted under `overflow`.
 */
export class BoundedLabels {
  private readonly seen = new Set<string>();

  constructor(
    private readonly max: number,
    private readonly overflow = 'other',
    private readonly maxLength = 128,
  ) {}

  label(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max || value.length > this.maxLength || value === '') return this.overflow;
    this.seen.add(value);
    return value;
  }
}
