// A strict reader of Prometheus's text exposition format (version 0.0.4), written for the tests:
// every line must be a HELP, TYPE or sample line (or empty), label values are unescaped, and a
// sample must belong to a family whose TYPE came before it. Anything else throws with the line.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → its TYPE. */
  types: Map<string, string>;
  /** Family name → its HELP text. */
  help: Map<string, string>;
}

const metricName = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const helpLine = new RegExp(`^# HELP (${metricName}) (.*)$`);
const typeLine = new RegExp(`^# TYPE (${metricName}) (counter|gauge|histogram|summary|untyped)$`);
const sampleLine = new RegExp(`^(${metricName})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`);
const labelPair = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/;
// Prometheus reads values with Go's ParseFloat, which takes Inf and NaN in any case; prom-client
// writes NaN as `Nan` (an event-loop mean before its first measurement).
const number = /^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf|nan)$/i;

/** Histograms and summaries expose samples under suffixed names. */
const suffixes = ['_bucket', '_sum', '_count', ''];

export function parsePrometheusText(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    if (line === '') continue;
    const helpMatch = helpLine.exec(line);
    if (helpMatch) {
      help.set(helpMatch[1] ?? '', helpMatch[2] ?? '');
      continue;
    }
    const typeMatch = typeLine.exec(line);
    if (typeMatch) {
      if (types.has(typeMatch[1] ?? '')) throw new Error(`TYPE given twice, ${where}`);
      types.set(typeMatch[1] ?? '', typeMatch[2] ?? '');
      continue;
    }
    if (line.startsWith('#')) throw new Error(`comment that is neither HELP nor TYPE, ${where}`);
    const sample = sampleLine.exec(line);
    if (!sample) throw new Error(`not a sample, ${where}`);
    const [, name = '', labelText, valueText = ''] = sample;
    if (!number.test(valueText)) throw new Error(`bad value, ${where}`);
    const family = suffixes.map((suffix) => (name.endsWith(suffix) ? name.slice(0, name.length - suffix.length) : null)).find((base) => base !== null && types.has(base));
    if (!family) throw new Error(`sample of a family without TYPE, ${where}`);
    samples.push({ name, labels: parseLabels(labelText ?? '', where), value: numberOf(valueText) });
  }
  return { samples, types, help };
}

function numberOf(text: string): number {
  const lower = text.toLowerCase();
  if (lower.endsWith('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
  return lower.endsWith('nan') ? NaN : Number(text);
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest !== '') {
    const pair = labelPair.exec(rest);
    if (!pair) throw new Error(`bad labels, ${where}`);
    const [whole, key = '', escaped = ''] = pair;
    if (key in labels) throw new Error(`label ${key} given twice, ${where}`);
    labels[key] = escaped.replace(/\\(.)/g, (_match, char: string) => (char === 'n' ? '\n' : char));
    rest = rest.slice(whole.length);
  }
  return labels;
}

/** The samples named `name` whose labels include every one of `labels`. */
export function samplesOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
}

/**
 * The value of the one sample named `name` with these labels; 0 when there is none yet (a
 * counter's series appears at its first increment). Several matches throw: the labels are too loose.
 */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const found = samplesOf(exposition, name, labels);
  if (found.length > 1) throw new Error(`${String(found.length)} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value ?? 0;
}
