import { TRPCClientError } from '@trpc/client';
import { appCodeOf } from './api-client.js';
import { el } from './dom.js';
import { formatAmount, formatValue, localText, metricNoun, resetText, untilText, windowAdjective, windowPhrase, type RefusedQuota } from './usage-format.js';

const windows = new Set(['minute', 'day', 'month']);
const metrics = new Set(['tokens', 'costUsd', 'requests']);

/**
 * The quota behind a 429 RATE_LIMIT_EXCEEDED (CONTRACT §13), or undefined for any other failure
 * (a rate limit without a quota, say, which passes in seconds and may be retried).
 */
export function quotaRefusalOf(error: unknown): RefusedQuota | undefined {
  if (appCodeOf(error) !== 'RATE_LIMIT_EXCEEDED' || !(error instanceof TRPCClientError)) return undefined;
  const data = error.data as { details?: { quota?: Partial<RefusedQuota> } } | undefined;
  const quota = data?.details?.quota;
  if (!quota || !windows.has(String(quota.window)) || !metrics.has(String(quota.metric))) return undefined;
  if (typeof quota.limit !== 'number' || typeof quota.used !== 'number' || typeof quota.resetAt !== 'string') return undefined;
  return quota as RefusedQuota;
}

/** One line for the composer's status: what was refused and until when. */
export function quotaSummary(quota: RefusedQuota): string {
  return `Not sent: your ${windowAdjective[quota.window]} ${metricNoun[quota.metric]} limit is reached until ${resetText(quota.resetAt)}.`;
}

/**
 * What the message area shows for a refused message: the quota, how much of it is used and when
 * it resets. No Retry: sending again before the reset is refused again, so the notice says when
 * sending works again instead. `outcome` says what became of the request.
 */
export function quotaNotice(quota: RefusedQuota, outcome: string): HTMLElement {
  const reset = el('time', { datetime: quota.resetAt, title: `${localText(quota.resetAt)} (your time)` }, resetText(quota.resetAt));
  return el(
    'section',
    { class: 'quota-notice', id: 'quota-notice', role: 'alert', 'aria-labelledby': 'quota-notice-title' },
    el('h3', { id: 'quota-notice-title' }, `Your ${windowAdjective[quota.window]} ${metricNoun[quota.metric]} limit is reached`),
    el(
      'p',
      {},
      `${formatValue(quota.metric, quota.used)} of ${formatAmount(quota.metric, quota.limit)} used ${windowPhrase[quota.window]}. `,
      'It resets at ',
      reset,
      ` (${untilText(quota.resetAt)}). ${outcome}`,
    ),
  );
}
