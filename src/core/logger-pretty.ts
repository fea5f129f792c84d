import type { DestinationStream } from 'pino';

// LOG_FORMAT=pretty: each JSON line pino writes, rewritten for a person at a terminal as
// `12:00:01.234 INFO  message key=value …`. The JSON line stays what collectors read (the default
// off a terminal); this is a view of the same record, so nothing is logged twice or differently.

export type LogFormat = 'json' | 'pretty';

const levels: Record<number, { label: string; colour: string }> = {
  10: { label: 'TRACE', colour: '90' },
  20: { label: 'DEBUG', colour: '90' },
  30: { label: 'INFO ', colour: '32' },
  40: { label: 'WARN ', colour: '33' },
  50: { label: 'ERROR', colour: '31' },
  60: { label: 'FATAL', colour: '35' },
};

/** LOG_FORMAT when set; unset, people at a terminal get `pretty` and everything else JSON. */
export function resolveLogFormat(setting: LogFormat | undefined, stdoutIsTerminal: boolean): LogFormat {
  return setting ?? (stdoutIsTerminal ? 'pretty' : 'json');
}

function shownValue(value: unknown): string {
  if (typeof value === 'string' && /^[^\s"=]+$/.test(value)) return value;
  return JSON.stringify(value);
}

/** One pino JSON line as a readable line (a stack, when there is one, on the lines below). */
export function formatLogLine(line: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, msg, err, ...fields } = record;
  const known = levels[Number(level)] ?? { label: String(level).padEnd(5), colour: '0' };
  const label = colour ? `\u001b[${known.colour}m${known.label}\u001b[0m` : known.label;
  // isoTime: 2026-11-26T23:52:16.689Z; the date is left out, people read the time of day.
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const extra = Object.entries(fields).map(([key, value]) => `${key}=${shownValue(value)}`);
  let text = [clock, label, typeof msg === 'string' ? msg : '', ...extra].filter((part) => part !== '').join(' ');
  if (err !== null && typeof err === 'object') {
    const { message, stack } = err as { message?: unknown; stack?: unknown };
    const detail = typeof stack === 'string' ? stack : typeof message === 'string' ? message : JSON.stringify(err);
    text += `\n${detail.replace(/^/gm, '    ')}`;
  }
  return `${text}\n`;
}

type FlushableDestination = DestinationStream & { flushSync?: () => void; flush?: (callback?: (error?: Error) => void) => void };

/** A destination that writes each line to `target` in the pretty form. */
export function prettyDestination(target: FlushableDestination, colour: boolean): FlushableDestination {
  return {
    write: (line: string) => {
      target.write(formatLogLine(line, colour));
    },
    ...(target.flushSync ? { flushSync: () => target.flushSync?.() } : {}),
    ...(target.flush ? { flush: (callback?: (error?: Error) => void) => target.flush?.(callback) } : {}),
  };
}
