import type { QuotaWindow } from './policy-document.js';

/** The start of the fixed UTC period holding `at` (CONTRACT §13), as epoch milliseconds. */
export function periodStart(window: QuotaWindow, at: number): number {
  const date = new Date(at);
  switch (window) {
    case 'minute':
      return at - (at % 60_000);
    case 'day':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
    case 'month':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
}

/** When the period holding `at` ends and the next one's budget starts. */
export function periodEnd(window: QuotaWindow, at: number): number {
  const start = periodStart(window, at);
  const date = new Date(start);
  switch (window) {
    case 'minute':
      return start + 60_000;
    case 'day':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
    case 'month':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
}
