import type { ApiClient } from './api-client.js';
import { el } from './dom.js';
import { formatAmount, formatValue, localText, metricNoun, resetText, tightest, windowAdjective, windowPhrase, type QuotaLimit } from './usage-format.js';

/** A share of a limit below which the indicator stands out. */
const lowShare = 0.1;
/** setTimeout's longest delay is about 24.8 days; a monthly reset further off is looked at again later. */
const longestWaitMs = 6 * 3_600_000;

/**
 * The chat's remaining budget: the caller's tightest quota ("12,400 tokens left today · resets
 * 00:00 UTC"), hidden while no quota holds them. Refreshed after each answer, after a refusal,
 * and when the quota's period ends (the budget is whole again then).
 */
export class BudgetIndicator {
  readonly element = el('p', { class: 'budget', id: 'budget-indicator', hidden: true });
  #timer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Bumped by each refresh: only the latest answer is shown. A refresh asked for after a change
   * (a saved policy) must not be answered by one that started before it.
   */
  #generation = 0;

  constructor(private readonly client: ApiClient) {}

  async refresh(): Promise<void> {
    const generation = ++this.#generation;
    let limits: QuotaLimit[];
    try {
      ({ limits } = await this.client.usage.limits.query());
    } catch (error) {
      // The indicator is a convenience: a failed read leaves the last one shown rather than break the chat.
      console.warn('could not read the remaining budget', error);
      return;
    }
    if (generation === this.#generation) this.show(limits);
  }

  show(limits: readonly QuotaLimit[]): void {
    clearTimeout(this.#timer);
    const limit = tightest(limits);
    this.element.hidden = limit === undefined;
    if (limit === undefined) return;
    const out = limit.remaining <= 0;
    this.element.dataset.state = out ? 'out' : limit.remaining < limit.limit * lowShare ? 'low' : 'ok';
    const reset = `resets ${resetText(limit.resetAt)}`;
    this.element.textContent = out
      ? `${capitalised(windowAdjective[limit.window])} ${metricNoun[limit.metric]} limit reached · ${reset}`
      : `${formatAmount(limit.metric, limit.remaining)} left ${windowPhrase[limit.window]} · ${reset}`;
    this.element.title = [`Resets ${localText(limit.resetAt)} (your time).`, 'Your quotas:', ...limits.map(describe)].join('\n');
    const soonest = Math.min(...limits.map((each) => Date.parse(each.resetAt)));
    this.#timer = setTimeout(() => void this.refresh(), Math.min(longestWaitMs, Math.max(1_000, soonest - Date.now() + 1_000)));
  }
}

function describe(limit: QuotaLimit): string {
  return `${formatValue(limit.metric, limit.used)} of ${formatAmount(limit.metric, limit.limit)} used ${windowPhrase[limit.window]}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
