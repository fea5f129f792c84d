import type { ApiClient } from './api-client.js';
import { el, errorText } from './dom.js';
import { PageDialog } from './page-dialog.js';
import { everyDay, shortDay, tokenChart } from './usage-chart.js';
import { formatAmount, formatCount, formatUsd, localText, resetText, windowPhrase, type QuotaLimit, type UsageReport, type UsageRow, type UsageTotals } from './usage-format.js';

type RangeChoice = 'month' | '30d' | 'custom';

/** A UTC day as `YYYY-MM-DD`, `offset` days from the one holding `at`. */
function utcDay(at: number, offset = 0): string {
  const date = new Date(at);
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + offset)).toISOString().slice(0, 10);
}

function dayAfter(day: string): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`), 1);
}

/** What the caller may see: others' usage needs audit:view (CONTRACT §13). */
export interface UsageViewer {
  canAudit: boolean;
}

/**
 * The usage page: the caller's tokens by day (a chart, and the same as a table) and by model over
 * a chosen range of UTC days, their quotas, and for callers with audit:view every user's totals
 * and any one user's usage. Estimated counts (calls the provider gave no count for) are shown
 * beside the real ones.
 */
export class UsagePage {
  readonly #dialog: PageDialog;
  readonly #range = el(
    'select',
    { id: 'usage-range', name: 'range', autofocus: true },
    el('option', { value: 'month' }, 'This month'),
    el('option', { value: '30d' }, 'Last 30 days'),
    el('option', { value: 'custom' }, 'Custom…'),
  );
  readonly #from = el('input', { type: 'date', id: 'usage-from', name: 'from', required: true });
  readonly #to = el('input', { type: 'date', id: 'usage-to', name: 'to', required: true });
  readonly #custom = el(
    'span',
    { class: 'usage-custom', hidden: true },
    el('span', {}, el('label', { for: 'usage-from' }, 'From'), this.#from),
    el('span', {}, el('label', { for: 'usage-to' }, 'To'), this.#to),
    el('button', { type: 'submit' }, 'Show'),
  );
  readonly #userField = el('input', { type: 'text', id: 'usage-user', name: 'userId', list: 'usage-user-ids', placeholder: 'you', autocomplete: 'off', spellcheck: 'false' });
  readonly #userIds = el('datalist', { id: 'usage-user-ids' });
  readonly #auditControls = el('span', { class: 'usage-user', hidden: true }, el('label', { for: 'usage-user' }, 'User'), this.#userField, this.#userIds);
  readonly #status = el('p', { class: 'usage-status', id: 'usage-status', role: 'status' });
  readonly #heading = el('h3', { id: 'usage-heading' }, 'Your usage');
  readonly #totals = el('dl', { class: 'usage-totals', id: 'usage-totals' });
  readonly #days = el('div', { class: 'usage-days' });
  readonly #models = el('div', { class: 'table-scroll' });
  readonly #users = el('section', { class: 'usage-section', 'aria-labelledby': 'usage-users-title', hidden: true });
  readonly #limits = el('section', { class: 'usage-section', 'aria-labelledby': 'usage-limits-title' });
  #viewer: UsageViewer = { canAudit: false };
  /** Bumped by each load: an answer to an older one must not replace a newer one's. */
  #generation = 0;

  constructor(
    private readonly client: ApiClient,
    fallbackFocus: () => HTMLElement | null,
  ) {
    this.#dialog = new PageDialog('usage-dialog', 'Usage', fallbackFocus);
    const form = el(
      'form',
      { class: 'usage-controls', 'aria-label': 'Which usage to show' },
      el('span', {}, el('label', { for: 'usage-range' }, 'Period'), this.#range),
      this.#custom,
      this.#auditControls,
    );
    this.#dialog.body.append(
      form,
      this.#status,
      el('section', { class: 'usage-section', 'aria-labelledby': 'usage-heading' }, this.#heading, this.#totals, this.#days),
      el('section', { class: 'usage-section', 'aria-labelledby': 'usage-models-title' }, el('h3', { id: 'usage-models-title' }, 'By model'), this.#models),
      this.#users,
      this.#limits,
    );
    this.#range.addEventListener('change', () => {
      const custom = this.#range.value === 'custom';
      this.#custom.hidden = !custom;
      if (custom) {
        // Starts from the range shown, so Custom narrows or widens it rather than begin blank.
        const now = Date.now();
        this.#from.value ||= `${utcDay(now).slice(0, 8)}01`;
        this.#to.value ||= utcDay(now);
        this.#from.focus();
        return;
      }
      void this.load();
    });
    this.#userField.addEventListener('change', () => void this.load());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.load();
    });
  }

  setViewer(viewer: UsageViewer): void {
    this.#viewer = viewer;
    this.#auditControls.hidden = !viewer.canAudit;
    this.#users.hidden = !viewer.canAudit;
  }

  open(opener: HTMLElement | null): void {
    this.#dialog.open(opener);
    void this.load();
  }

  /** `[from, to)` as UTC days, or a reason the custom range cannot be shown. */
  #chosenRange(): { from: string; to: string } | string {
    const now = Date.now();
    switch (this.#range.value as RangeChoice) {
      case 'month':
        return { from: `${utcDay(now).slice(0, 8)}01`, to: utcDay(now, 1) };
      case '30d':
        return { from: utcDay(now, -29), to: utcDay(now, 1) };
      case 'custom': {
        const from = this.#from.value;
        const to = this.#to.value;
        if (!from || !to) return 'Choose both days of the custom range.';
        if (to < from) return 'The range ends before it starts.';
        // The last day chosen is included whole.
        return { from, to: dayAfter(to) };
      }
    }
  }

  async load(): Promise<void> {
    const generation = ++this.#generation;
    const range = this.#chosenRange();
    this.#to.setCustomValidity(typeof range === 'string' ? range : '');
    if (typeof range === 'string') {
      this.#status.textContent = range;
      return;
    }
    const userId = this.#viewer.canAudit ? this.#userField.value.trim() || undefined : undefined;
    this.#status.textContent = 'Loading…';
    this.#dialog.body.setAttribute('aria-busy', 'true');
    try {
      const query = { ...range, ...(userId ? { userId } : {}) };
      // One batched request: the page is drawn from one moment of the ledger.
      const [days, models, users, limits] = await Promise.all([
        this.client.usage.report.query({ ...query, groupBy: 'day' }),
        this.client.usage.report.query({ ...query, groupBy: 'model' }),
        // Refused on its own (the caller lost audit:view since the page learned its permissions):
        // the caller's own usage is still shown, and the by-user parts are put away.
        this.#viewer.canAudit ? this.client.usage.report.query({ ...range, groupBy: 'user' }).catch(() => 'refused' as const) : Promise.resolve(null),
        // The limits are the caller's own; another user's are not asked for.
        userId ? Promise.resolve(null) : this.client.usage.limits.query(),
      ]);
      if (generation !== this.#generation) return;
      this.#heading.textContent = userId ? `Usage of ${userId}` : 'Your usage';
      this.#showTotals(days.totals);
      this.#showDays(days);
      this.#models.replaceChildren(usageTable('usage-by-model', 'Model', models.rows, (row) => row.key, 'No model was used in this period.'));
      if (users === 'refused') this.setViewer({ canAudit: false });
      else if (users) this.#showUsers(users);
      this.#showLimits(limits?.limits ?? null);
      this.#status.textContent = `${shortDay(range.from)} to ${shortDay(utcDay(Date.parse(`${range.to}T00:00:00Z`), -1))} (UTC days).`;
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#status.textContent = `Could not load the usage: ${errorText(error)}`;
    } finally {
      if (generation === this.#generation) this.#dialog.body.removeAttribute('aria-busy');
    }
  }

  #showTotals(totals: UsageTotals): void {
    const pair = (term: string, ...details: (string | Node)[]) => el('div', {}, el('dt', {}, term), el('dd', {}, ...details));
    this.#totals.replaceChildren(
      pair('Tokens', formatCount(totals.totalTokens), el('span', { class: 'usage-split' }, ` (${formatCount(totals.inputTokens)} in, ${formatCount(totals.outputTokens)} out)`)),
      pair('Requests', formatCount(totals.requests)),
      pair('Cost', totals.costUsd === null ? 'not priced' : formatUsd(totals.costUsd)),
      pair(
        'Estimated',
        totals.estimated > 0
          ? `${formatCount(totals.estimated)} of ${formatCount(totals.requests)} ${totals.requests === 1 ? 'call' : 'calls'} (the provider gave no count)`
          : 'none',
      ),
    );
  }

  #showDays(report: UsageReport): void {
    const days = everyDay(report.rows, report.from, report.to);
    const table = usageTable('usage-by-day', 'Day', days, (row) => shortDay(row.key), 'No day in this period.');
    this.#days.replaceChildren(tokenChart(days), el('details', { class: 'usage-day-table' }, el('summary', {}, 'Show the days as a table'), el('div', { class: 'table-scroll' }, table)));
  }

  #showUsers(report: UsageReport): void {
    this.#userIds.replaceChildren(...report.rows.map((row) => el('option', { value: row.key })));
    const showButton = (row: UsageRow) => {
      const button = el('button', { type: 'button', class: 'link-button', 'aria-label': `Show the usage of ${row.key}` }, row.key);
      button.addEventListener('click', () => {
        this.#userField.value = row.key;
        void this.load().then(() => {
          this.#heading.scrollIntoView({ block: 'nearest' });
        });
      });
      return button;
    };
    this.#users.replaceChildren(
      el('h3', { id: 'usage-users-title' }, 'By user'),
      el('div', { class: 'table-scroll' }, usageTable('usage-by-user', 'User', report.rows, showButton, 'Nobody used a model in this period.')),
    );
  }

  #showLimits(limits: QuotaLimit[] | null): void {
    this.#limits.hidden = limits === null;
    if (limits === null) return;
    const title = el('h3', { id: 'usage-limits-title' }, 'Your quotas');
    if (limits.length === 0) {
      this.#limits.replaceChildren(title, el('p', { class: 'usage-empty' }, 'No quota holds you.'));
      return;
    }
    const rows = limits.map((limit) =>
      el(
        'tr',
        {},
        el('th', { scope: 'row' }, `${formatAmount(limit.metric, limit.limit)} ${windowPhrase[limit.window]}`),
        el('td', {}, formatAmount(limit.metric, limit.used)),
        el('td', {}, formatAmount(limit.metric, Math.max(0, limit.remaining))),
        el('td', {}, el('time', { datetime: limit.resetAt, title: `${localText(limit.resetAt)} (your time)` }, resetText(limit.resetAt))),
      ),
    );
    this.#limits.replaceChildren(
      title,
      el(
        'div',
        { class: 'table-scroll' },
        el(
          'table',
          { class: 'usage-table', id: 'usage-limits' },
          el('thead', {}, el('tr', {}, ...['Limit', 'Used', 'Left', 'Resets'].map((name) => el('th', { scope: 'col' }, name)))),
          el('tbody', {}, ...rows),
        ),
      ),
    );
  }
}

/** A table of usage rows: the first column names the row (`keyCell`), then the counts. */
function usageTable(id: string, keyHeader: string, rows: readonly UsageRow[], keyCell: (row: UsageRow) => string | Node, whenEmpty: string): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'usage-empty', id }, whenEmpty);
  const headers = [keyHeader, 'Requests', 'Input tokens', 'Output tokens', 'Total tokens', 'Cost', 'Estimated'];
  const number = (value: number) => el('td', { class: 'number' }, formatCount(value));
  return el(
    'table',
    { class: 'usage-table', id },
    el('thead', {}, el('tr', {}, ...headers.map((name, index) => el('th', { scope: 'col', class: index > 0 ? 'number' : undefined }, name)))),
    el(
      'tbody',
      {},
      ...rows.map((row) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, keyCell(row)),
          number(row.requests),
          number(row.inputTokens),
          number(row.outputTokens),
          number(row.totalTokens),
          el('td', { class: 'number', title: row.costUsd === null ? 'No price is configured for these calls' : undefined }, row.costUsd === null ? '—' : formatUsd(row.costUsd)),
          el('td', { class: 'number', title: row.estimated > 0 ? 'Calls the provider gave no count for: their tokens are estimated' : undefined }, row.estimated > 0 ? formatCount(row.estimated) : '—'),
        ),
      ),
    ),
  );
}
