import { AppError } from '../errors/app-error.js';
import { upstreamError } from '../providers/upstream-error.js';
import { ProviderTimeoutError } from './provider-fetch.js';

function findInChain<T>(error: unknown, match: (value: unknown) => value is T): T | undefined {
  const seen = new Set<unknown>();
  let current = error;
  while (current !== null && typeof current === 'object' && !seen.has(current)) {
    if (match(current)) return current;
    seen.add(current);
    const next = current as { cause?: unknown; lastError?: unknown };
    current = next.lastError ?? next.cause;
  }
  return undefined;
}

/**
 * The contract's error for a failed generation (CONTRACT §2): the provider's own failures through
 * the shared upstream map, our first-byte timeout as MODEL_UNAVAILABLE, and anything else as a
 * STREAMING_ERROR without internal detail.
 */
export function chatError(error: unknown, provider: string): AppError {
  if (error instanceof AppError) return error;
  const timeout = findInChain(error, (value): value is ProviderTimeoutError => value instanceof ProviderTimeoutError);
  if (timeout) {
    return new AppError('MODEL_UNAVAILABLE', `${provider} did not answer within ${timeout.timeoutMs} ms`, {
      details: { provider, reason: 'timeout' },
      cause: error,
    });
  }
  const mapped = upstreamError(error, provider, { operation: 'generating the answer' });
  return mapped;
}
