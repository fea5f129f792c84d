import { pino, type Logger } from 'pino';

export type { Logger };

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
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 1, sync: false })): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: redactPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
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
