import { pino, type Logger } from 'pino';
import { prettyDestination, type LogFormat } from './logger-pretty.js';

export type { Logger, LogFormat };

// Secrets never reach the logs (CONTRACT §4): known secret fields are censored wherever they
// appear, and URLs are logged through redactUrl.
const redactPaths = [
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'password',
  '*.password',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'environment',
  '*.environment',
];

/**
 * By default lines go to stdout asynchronously: under load, the lines logged while a write is
 * under way go out together in the next one, instead of one write system call each (a request
 * line per request was the largest single cost of a small request, BENCHMARKS.md "REST and
 * storage"). Pino flushes what is left when the process exits; only a `kill -9` can lose lines.
 * With `format` pretty each line is rewritten for people (logger-pretty.ts).
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  // Each write holds whole lines and at most PIPE_BUF (4096) bytes (a longer line alone), which a
  // pipe writes at once: the workers of WORKERS > 1 share one stdout, and a larger write could be
  // interleaved with another worker's mid-line.
  const target = destination ?? pino.destination({ dest: 1, sync: false, maxWrite: 4096 });
  // Colours only on a terminal of one's own (the default stdout), and not when NO_COLOR asks.
  const colour = destination === undefined && process.stdout.isTTY && !process.env.NO_COLOR;
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    format === 'pretty' ? prettyDestination(target, colour) : target,
  );
}

// `code`: the OAuth authorization code on /auth/callback, a credential until it is spent (RFC 6749 §10.5).
// `connectionParams`: tRPC's subscription link sends the access token in it (EventSource has no headers).
const secretQueryKeys = new Set(['apikey', 'access_token', 'token', 'key', 'input', 'code', 'connectionparams']);

/** A request URL with the values of secret query parameters replaced. */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart < 0) return url;
  const params = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0] ?? '';
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A malformed name is logged as sent; it cannot be one of the secret keys anyway.
      }
      // `input` carries a whole /trpc call (an apiKey among its fields): never logged.
      return secretQueryKeys.has(decoded.toLowerCase()) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, queryStart)}?${params.join('&')}`;
}
