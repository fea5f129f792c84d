import { AppError } from '../errors/app-error.js';
import { ProviderProtocolError, ProviderStreamError, ProviderTimeoutError } from '../providers/provider-errors.js';
import { upstreamError, upstreamStatusError } from '../providers/upstream-error.js';

/**
 * The contract's error for a failed generation (CONTRACT §2): the provider's statuses and socket
 * failures through the shared upstream map, a timeout or an answer that cannot be read as
 * MODEL_UNAVAILABLE, a failure the provider reports inside its stream as the status it stands for.
 */
export function chatError(error: unknown, provider: string): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ProviderTimeoutError) {
    const message =
      error.phase === 'first-byte' ? `${provider} did not answer within ${error.timeoutMs} ms` : `${provider} stopped sending its answer for ${error.timeoutMs} ms`;
    return new AppError('MODEL_UNAVAILABLE', message, { details: { provider, reason: 'timeout' }, cause: error });
  }
  if (error instanceof ProviderProtocolError) {
    const message =
      error.reason === 'cut' ? `${provider} closed the connection before its answer ended` : `${provider} sent an answer that could not be read`;
    return new AppError('MODEL_UNAVAILABLE', message, { details: { provider, reason: error.reason }, cause: error });
  }
  if (error instanceof ProviderStreamError) {
    return upstreamStatusError(error.status, provider, { operation: 'generating the answer', cause: error });
  }
  return upstreamError(error, provider, { operation: 'generating the answer' });
}
