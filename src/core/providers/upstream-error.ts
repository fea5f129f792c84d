import { AppError } from '../errors/app-error.js';

// One map from "a model provider call went wrong" to the contract's error (CONTRACT §2): the
// models area, the chat engine and anything else that talks to a provider use it, so the same
// upstream failure always reads the same to a client.

/**
 * What a failed provider call may carry: a status with the response's headers (`statusCode` or
 * `status`, `responseHeaders`), the `ollama` client's ResponseError (`status_code`), or a network
 * error whose `code` (or `cause.code`) names the socket failure.
 */
export interface UpstreamFailure {
  statusCode?: number;
  status?: number;
  status_code?: number;
  responseHeaders?: Record<string, string>;
  name?: string;
  code?: string;
  cause?: unknown;
}

export type UpstreamFailureKind =
  | { kind: 'status'; status: number; retryAfter?: string }
  | { kind: 'timeout' }
  | { kind: 'network'; code?: string };

/** Socket-level failures: the provider is not there, or went away mid-request. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const timeoutCodes = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function numberField(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
}

function retryAfterOf(headers: unknown): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() === 'retry-after' && typeof value === 'string') return value;
  }
  return undefined;
}

/**
 * What kind of failure an error is, looking through `cause` chains (and `lastError`, where a
 * retrying client keeps the last attempt's); null when nothing in it says (a bug, or a reply that
 * could not be understood).
 */
export function classifyUpstreamFailure(error: unknown): UpstreamFailureKind | null {
  const seen = new Set<unknown>();
  let fetchFailed = false;
  let current: unknown = error;
  while (current !== null && typeof current === 'object' && !seen.has(current)) {
    seen.add(current);
    const failure = current as UpstreamFailure & { lastError?: unknown };
    const status = numberField(failure.statusCode) ?? numberField(failure.status_code) ?? numberField(failure.status);
    if (status !== undefined) {
      const retryAfter = retryAfterOf(failure.responseHeaders);
      return retryAfter === undefined ? { kind: 'status', status } : { kind: 'status', status, retryAfter };
    }
    if (failure.name === 'TimeoutError' || failure.name === 'AbortError') return { kind: 'timeout' };
    if (typeof failure.code === 'string' && networkCodes.has(failure.code)) {
      return timeoutCodes.has(failure.code) ? { kind: 'timeout' } : { kind: 'network', code: failure.code };
    }
    // undici reports every socket failure as `TypeError: fetch failed` with the reason as cause;
    // a reason not named above (TLS, DNS oddities) is still a provider that cannot be reached.
    if (current instanceof TypeError && current.message === 'fetch failed') fetchFailed = true;
    current = failure.lastError ?? failure.cause;
  }
  return fetchFailed ? { kind: 'network' } : null;
}

export interface UpstreamErrorOptions {
  /** What was being done, for the message: "listing models", "pulling llama3.2". */
  operation?: string;
}

/**
 * The contract's error for a failed provider call: 400/401/403/404/422 → INVALID_REQUEST (the
 * provider rejected the key, model or request), 429 → RATE_LIMIT_EXCEEDED (with the provider's
 * Retry-After when it gave one), 5xx, refused connections and timeouts → MODEL_UNAVAILABLE.
 *
 * The provider's own error text is never copied into the message: hosted providers quote part
 * of a rejected API key back, and keys must not reach clients, logs or the audit log. An AppError
 * passes through unchanged. A caller-initiated abort should be handled before calling this: an
 * AbortError reads as a timeout here.
 */
export function upstreamError(error: unknown, provider: string, options: UpstreamErrorOptions = {}): AppError {
  if (error instanceof AppError) return error;
  const failure = classifyUpstreamFailure(error);
  const doing = options.operation ? ` while ${options.operation}` : '';
  const details = { provider };
  if (failure === null) {
    return new AppError('MODEL_UNAVAILABLE', `${provider} failed${doing}`, { details, cause: error });
  }
  switch (failure.kind) {
    case 'timeout':
      return new AppError('MODEL_UNAVAILABLE', `${provider} did not answer in time${doing}`, {
        details: { ...details, reason: 'timeout' },
        cause: error,
      });
    case 'network':
      return new AppError('MODEL_UNAVAILABLE', `${provider} is unreachable${doing}`, {
        details: { ...details, reason: 'unreachable' },
        cause: error,
      });
    case 'status':
      return upstreamStatusError(failure.status, provider, { ...options, cause: error, retryAfter: failure.retryAfter });
  }
}

/** The contract's error for a provider's HTTP status (see upstreamError). */
export function upstreamStatusError(
  status: number,
  provider: string,
  options: UpstreamErrorOptions & { cause?: unknown; retryAfter?: string | undefined } = {},
): AppError {
  const doing = options.operation ? ` while ${options.operation}` : '';
  const details = { provider, status };
  const cause = options.cause;
  if (status === 401 || status === 403) {
    return new AppError('INVALID_REQUEST', `${provider} rejected the API key${doing}`, { details, cause });
  }
  if (status === 429) {
    const headers: Record<string, string> = options.retryAfter ? { 'Retry-After': options.retryAfter } : {};
    return new AppError('RATE_LIMIT_EXCEEDED', `${provider} is rate limiting requests${doing}`, { details, headers, cause });
  }
  if (status === 408 || status >= 500 || status < 400) {
    return new AppError('MODEL_UNAVAILABLE', `${provider} is unavailable (HTTP ${status})${doing}`, { details, cause });
  }
  return new AppError('INVALID_REQUEST', `${provider} rejected the request or model (HTTP ${status})${doing}`, { details, cause });
}
