import type { inferRouterOutputs } from '@trpc/server';
import type { AppRouter } from '../../src/routers/app-router.js';

type Outputs = inferRouterOutputs<AppRouter>;
export type UsageReport = Outputs['usage']['report'];
export type UsageTotals = UsageReport['totals'];
export type UsageRow = UsageReport['rows'][number];
export type QuotaLimit = Outputs['usage']['limits']['limits'][number];
export type QuotaWindow = QuotaLimit['window'];
export type QuotaMetric = QuotaLimit['metric'];

/** A quota refusal's `details.quota` (CONTRACT §13). */
export interface RefusedQuota {
  window: QuotaWindow;
  metric: QuotaMetric;
  limit: number;
  used: number;
  resetAt: string;
}

const counts = new Intl.NumberFormat();
const dollars = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
// Cents hide what a few short answers cost; small sums show to a hundredth of a cent.
const smallDollars = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });

export function formatCount(value: number): string {
  return counts.format(value);
}

export function formatUsd(value: number): string {
  return (Math.abs(value) < 1 && value !== 0 ? smallDollars : dollars).format(value);
}

/** "12,400 tokens", "1 request", "$0.25". */
export function formatAmount(metric: QuotaMetric, value: number): string {
  switch (metric) {
    case 'tokens':
      return `${formatCount(value)} ${value === 1 ? 'token' : 'tokens'}`;
    case 'requests':
      return `${formatCount(value)} ${value === 1 ? 'request' : 'requests'}`;
    case 'costUsd':
      return formatUsd(value);
  }
}

/** The number alone where the unit follows ("505 of 10 tokens"); with its $ for money. */
export function formatValue(metric: QuotaMetric, value: number): string {
  return metric === 'costUsd' ? formatUsd(value) : formatCount(value);
}

/** "today", for "12,400 tokens left today". */
export const windowPhrase: Record<QuotaWindow, string> = { minute: 'this minute', day: 'today', month: 'this month' };
/** "daily", for "daily token limit". */
export const windowAdjective: Record<QuotaWindow, string> = { minute: 'per-minute', day: 'daily', month: 'monthly' };
export const metricNoun: Record<QuotaMetric, string> = { tokens: 'token', requests: 'request', costUsd: 'spending' };

const utcTime = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const utcDate = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', day: 'numeric', month: 'short' });
const localDateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * When a quota resets, in UTC as the periods are: "00:00 UTC" when that is within a day, else
 * with its date ("1 Dec 00:00 UTC"). Windows are fixed UTC periods, so UTC names the boundary
 * the same way for everyone on a team.
 */
export function resetText(resetAt: string, now = Date.now()): string {
  const at = new Date(resetAt);
  const time = `${utcTime.format(at)} UTC`;
  return at.getTime() - now < 86_400_000 ? time : `${utcDate.format(at)} ${time}`;
}

/** The same moment on this machine's clock, for a tooltip. */
export function localText(resetAt: string): string {
  return localDateTime.format(new Date(resetAt));
}

/** "in 42 s", "in 12 min", "in 5 h 12 min", "in 3 days". */
export function untilText(resetAt: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.ceil((Date.parse(resetAt) - now) / 1000));
  if (seconds < 60) return `in ${seconds} s`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return `in ${Math.round(hours / 24)} days`;
}

/** The limit with the least left, as a share of itself (a zero limit counts as used up). */
export function tightest(limits: readonly QuotaLimit[]): QuotaLimit | undefined {
  const share = (limit: QuotaLimit) => (limit.limit > 0 ? Math.max(0, limit.remaining) / limit.limit : 0);
  let best: QuotaLimit | undefined;
  for (const limit of limits) if (best === undefined || share(limit) < share(best)) best = limit;
  return best;
}
