import { el } from './dom.js';
import { formatCount, type UsageRow } from './usage-format.js';

const svgNamespace = 'http://www.w3.org/2000/svg';
const dayLabel = new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', day: 'numeric', month: 'short' });

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}): SVGElementTagNameMap[K] {
  const element = document.createElementNS(svgNamespace, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  return element;
}

/** `2026-11-27` → "27 Nov" (the day is a UTC day, as the ledger counts them). */
export function shortDay(day: string): string {
  return dayLabel.format(new Date(`${day}T00:00:00Z`));
}

/** The UTC days of [from, to), as `YYYY-MM-DD`: every day gets a bar, a quiet one too. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(to);
  // A range ending mid-day still shows that day.
  for (let at = Date.parse(from.slice(0, 10)); at < end; at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

const empty = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0, costUsd: null, estimated: 0 };

/** One row per day of the range, days without use as zeros. */
export function everyDay(rows: readonly UsageRow[], from: string, to: string): UsageRow[] {
  const byDay = new Map(rows.map((row) => [row.key, row]));
  return daysOf(from, to).map((day) => byDay.get(day) ?? { key: day, ...empty });
}

function dayTitle(row: UsageRow): string {
  const estimated = row.estimated > 0 ? `, ${formatCount(row.estimated)} estimated` : '';
  return `${shortDay(row.key)}: ${formatCount(row.totalTokens)} tokens (${formatCount(row.inputTokens)} in, ${formatCount(row.outputTokens)} out), ${formatCount(row.requests)} ${row.requests === 1 ? 'request' : 'requests'}${estimated}`;
}

/**
 * Tokens per day as stacked bars (input below, output above), drawn in SVG. The drawing stretches
 * to the width it is given, so its labels are HTML around it, not SVG text that would stretch
 * with it. Each day's numbers are its tooltip; the caption says the range and its busiest day, and
 * the page offers the same numbers as a table for reading them exactly.
 */
export function tokenChart(days: readonly UsageRow[]): HTMLElement {
  const slot = 10;
  const height = 100;
  const highest = Math.max(0, ...days.map((row) => row.totalTokens));
  const drawing = svg('svg', { viewBox: `0 0 ${Math.max(1, days.length) * slot} ${height}`, preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' });
  const scale = (value: number) => (highest === 0 ? 0 : (value / highest) * height);
  days.forEach((row, index) => {
    const group = svg('g', { class: row.estimated > 0 ? 'day estimated' : 'day' });
    const title = svg('title');
    title.textContent = dayTitle(row);
    group.append(title);
    // A day with any use keeps a sliver of a bar, so it does not read as a day without any.
    const total = row.totalTokens > 0 ? Math.max(1, scale(row.totalTokens)) : 0;
    const input = row.totalTokens > 0 ? (total * row.inputTokens) / row.totalTokens : 0;
    const x = index * slot + 1;
    group.append(
      svg('rect', { class: 'bar-input', x, y: height - input, width: slot - 2, height: input }),
      svg('rect', { class: 'bar-output', x, y: height - total, width: slot - 2, height: total - input }),
    );
    drawing.append(group);
  });

  const first = days[0];
  const last = days.at(-1);
  const busiest = days.reduce<UsageRow | undefined>((best, row) => (row.totalTokens > (best?.totalTokens ?? 0) ? row : best), undefined);
  const range = first && last ? `${shortDay(first.key)} to ${shortDay(last.key)}` : 'no days';
  const caption = busiest
    ? `Tokens per day, ${range}; the busiest day was ${shortDay(busiest.key)} with ${formatCount(busiest.totalTokens)} tokens.`
    : `Tokens per day, ${range}: none used.`;
  const middle = days.length > 7 ? days[Math.floor(days.length / 2)] : undefined;
  return el(
    'figure',
    { class: 'usage-chart', id: 'usage-chart' },
    el('div', { class: 'chart-scale', 'aria-hidden': 'true' }, highest > 0 ? formatCount(highest) : '0'),
    el('div', { class: 'chart-plot' }, drawing),
    el(
      'div',
      { class: 'chart-axis', 'aria-hidden': 'true' },
      el('span', {}, first ? shortDay(first.key) : ''),
      middle ? el('span', {}, shortDay(middle.key)) : null,
      el('span', {}, last && last !== first ? shortDay(last.key) : ''),
    ),
    el(
      'figcaption',
      {},
      caption,
      ' ',
      el(
        'span',
        { class: 'chart-legend' },
        el('span', { class: 'swatch swatch-input' }),
        'input ',
        el('span', { class: 'swatch swatch-output' }),
        'output',
        days.some((row) => row.estimated > 0) ? ' · paler days include estimated counts' : '',
      ),
    ),
  );
}
