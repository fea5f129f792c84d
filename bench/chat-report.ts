import { percentile } from './http-load.js';

// The chat benchmark's figures: each route's samples (one per round and cell), folded into the
// issue 24 table, the detailed table and the target ratios. Every comparison is between routes
// measured in the same run; "added" first token is taken against the direct route of the same round.

export type Kind = 'sse' | 'json';

export interface Cell {
  kind: Kind;
  concurrency: number;
}

export interface Sample {
  round: number;
  exchanges: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU (user + system) of the route's own processes over the measured exchanges, ms. */
  cpuMs: number;
  /** CPU of the fake upstream over the same time: the same work on every route, by the same-bytes rule. */
  upstreamCpuMs: number;
  /** A service's exchanges on PostgreSQL: the CPU of every PostgreSQL process on the machine over the same time. */
  databaseCpuMs?: number;
}

export interface RouteInfo {
  name: string;
  label: string;
}

export const cellName = ({ kind, concurrency }: Cell) => `${kind === 'sse' ? 'streamed' : 'whole'} c=${concurrency}`;

/** samples[route][cell] */
export type Samples = Map<string, Map<string, Sample[]>>;

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 0.5);
const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(2)} ms`;

export interface Folded {
  perSecond: number;
  perSecondRange: [number, number];
  p50: number;
  p99: number;
  /** Median over rounds of (this route's p50 − the direct route's p50 in the same round). */
  added: number;
  cpuPerExchange: number;
  upstreamCpuPerExchange: number;
  /** PostgreSQL's CPU per exchange, when it was read (a service on PostgreSQL). */
  databaseCpuPerExchange: number | undefined;
  exchanges: number;
  errors: number;
}

export function fold(samples: Samples, route: string, cell: Cell): Folded | undefined {
  const mine = samples.get(route)?.get(cellName(cell));
  if (mine === undefined || mine.length === 0) return undefined;
  const direct = samples.get('direct')?.get(cellName(cell)) ?? [];
  const added = mine.flatMap((sample) => {
    const reference = direct.find((d) => d.round === sample.round);
    return reference === undefined ? [] : [sample.p50 - reference.p50];
  });
  const exchanges = mine.reduce((sum, s) => sum + s.exchanges, 0);
  const rates = mine.map((s) => s.perSecond);
  return {
    perSecond: median(rates),
    perSecondRange: [Math.min(...rates), Math.max(...rates)],
    p50: median(mine.map((s) => s.p50)),
    p99: median(mine.map((s) => s.p99)),
    added: median(added),
    cpuPerExchange: mine.reduce((sum, s) => sum + s.cpuMs, 0) / exchanges,
    upstreamCpuPerExchange: mine.reduce((sum, s) => sum + s.upstreamCpuMs, 0) / exchanges,
    databaseCpuPerExchange: mine.every((s) => s.databaseCpuMs !== undefined) ? mine.reduce((sum, s) => sum + (s.databaseCpuMs ?? 0), 0) / exchanges : undefined,
    exchanges,
    errors: mine.reduce((sum, s) => sum + s.errors, 0),
  };
}

export function detailTable(samples: Samples, routes: RouteInfo[], cells: Cell[]): string {
  const rows = cells.flatMap((cell) =>
    routes.flatMap((route) => {
      const f = fold(samples, route.name, cell);
      if (f === undefined) return [];
      return [
        [
          route.label,
          cellName(cell),
          `${f.p50.toFixed(2)} ms`,
          `${f.p99.toFixed(2)} ms`,
          route.name === 'direct' ? '—' : signed(f.added),
          `${f.perSecond.toFixed(0)} (${f.perSecondRange[0].toFixed(0)}–${f.perSecondRange[1].toFixed(0)})`,
          route.name === 'direct' ? '—' : `${f.cpuPerExchange.toFixed(3)} ms`,
          `${f.upstreamCpuPerExchange.toFixed(3)} ms`,
          `${f.errors} of ${f.exchanges}`,
        ],
      ];
    }),
  );
  return [
    '| route | kind | first event p50 | p99 | added p50 vs direct | exchanges/s, median (range over rounds) | CPU of the route\'s processes per exchange | CPU of the fake upstream per exchange | errors |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map((cols) => `| ${cols.join(' | ')} |`),
  ].join('\n');
}

/** Where the database's CPU was read (a service on PostgreSQL): what it spent per exchange beside the service. */
export function databaseLines(samples: Samples, routes: RouteInfo[], cells: Cell[]): string[] {
  return routes.flatMap((route) =>
    cells.flatMap((cell) => {
      const f = fold(samples, route.name, cell);
      if (f?.databaseCpuPerExchange === undefined) return [];
      return [`- ${route.label}, ${cellName(cell)}: PostgreSQL ${f.databaseCpuPerExchange.toFixed(3)} ms of CPU per exchange beside the service's ${f.cpuPerExchange.toFixed(3)} ms`];
    }),
  );
}

const streamed1: Cell = { kind: 'sse', concurrency: 1 };
const streamed50: Cell = { kind: 'sse', concurrency: 50 };
const whole50: Cell = { kind: 'json', concurrency: 50 };

/** The table of issue 24: added first token at c=1, streamed and whole exchanges/s at c=50, CPU per exchange. */
export function issueTable(samples: Samples, routes: RouteInfo[]): string {
  const rows = routes.map((route) => {
    const first = fold(samples, route.name, streamed1);
    const streamed = fold(samples, route.name, streamed50);
    const whole = fold(samples, route.name, whole50);
    const cpu = (f: Folded | undefined) => (f === undefined ? '—' : route.name === 'direct' ? `(${f.upstreamCpuPerExchange.toFixed(3)} ms)` : `${f.cpuPerExchange.toFixed(3)} ms`);
    return [
      route.label,
      first === undefined ? '—' : route.name === 'direct' ? `— (${first.p50.toFixed(2)} ms)` : signed(first.added),
      streamed?.perSecond.toFixed(0) ?? '—',
      whole?.perSecond.toFixed(0) ?? '—',
      cpu(streamed),
      cpu(whole),
    ];
  });
  return [
    '| route | added first token, c=1 | streamed exchanges/s, c=50 | whole replies/s, c=50 | CPU per streamed exchange, c=50 | CPU per whole reply, c=50 |',
    '|---|---|---|---|---|---|',
    ...rows.map((cols) => `| ${cols.join(' | ')} |`),
  ].join('\n');
}

/** Issue 24's targets for one service route, as ratios to routes of the same run. */
export function targetLines(samples: Samples, service: RouteInfo, onPostgres: boolean): string[] {
  const get = (route: string, cell: Cell) => {
    const folded = fold(samples, route, cell);
    if (folded === undefined) throw new Error(`no ${route} figures for ${cellName(cell)}`);
    return folded;
  };
  const throughputTarget = onPostgres ? 1.5 : 2;
  const lines: string[] = [];
  for (const cell of [streamed50, whole50]) {
    const ours = get(service.name, cell).perSecond;
    const portkey = get('portkey', cell).perSecond;
    const ratio = ours / portkey;
    lines.push(
      `- ${service.label}, ${cellName(cell)}: ${ours.toFixed(0)}/s, ${ratio.toFixed(2)}× Portkey's ${portkey.toFixed(0)}/s (target ≥ ${throughputTarget}×): ${ratio >= throughputTarget ? 'met' : 'missed'}`,
    );
  }
  const ourAdded = get(service.name, streamed1).added;
  const bareAdded = get('bare', streamed1).added;
  lines.push(
    `- ${service.label}, added first token at c=1: ${signed(ourAdded)}, ${(ourAdded / bareAdded).toFixed(1)}× the bare hop's ${signed(bareAdded)} (target ≤ 3×): ${ourAdded <= 3 * bareAdded ? 'met' : 'missed'}`,
  );
  for (const cell of [streamed50, whole50]) {
    const ours = get(service.name, cell).cpuPerExchange;
    const bare = get('bare', cell).cpuPerExchange;
    lines.push(
      `- ${service.label}, CPU per exchange (${cellName(cell)}): ${ours.toFixed(3)} ms, ${(ours / bare).toFixed(1)}× the bare hop's ${bare.toFixed(3)} ms (target ≤ 3×): ${ours <= 3 * bare ? 'met' : 'missed'}`,
    );
  }
  return lines;
}

/** B against A, cell by cell: the A/B of two builds measured in the same rounds. */
export function abLines(samples: Samples, a: RouteInfo, b: RouteInfo, cells: Cell[]): string[] {
  return cells.flatMap((cell) => {
    const fa = fold(samples, a.name, cell);
    const fb = fold(samples, b.name, cell);
    if (fa === undefined || fb === undefined) return [];
    const perRound = (samples.get(b.name)?.get(cellName(cell)) ?? []).flatMap((sb) => {
      const sa = samples.get(a.name)?.get(cellName(cell))?.find((s) => s.round === sb.round);
      return sa === undefined ? [] : [(sb.perSecond / sa.perSecond).toFixed(2)];
    });
    return [
      `- ${cellName(cell)}: exchanges/s ${(fb.perSecond / fa.perSecond).toFixed(2)}× (per round ${perRound.join(', ')}); CPU per exchange ${(fb.cpuPerExchange / fa.cpuPerExchange).toFixed(2)}×; added first event ${signed(fa.added)} → ${signed(fb.added)}`,
    ];
  });
}
