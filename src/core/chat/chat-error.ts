import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import { ProviderHttpError, ProviderProtocolError, ProviderStreamError, ProviderTimeoutError, ProviderUnreachableError } from '../providers/provider-errors.js';
import { providerSettingNames } from '../providers/provider-settings.js';
import { upstreamError, upstreamStatusError } from '../providers/upstream-error.js';

const generating = 'generating the answer';

/**
 * The contract's error for a failed generation (CONTRACT §2): the provider's statuses and socket
 * failures through the shared upstream map, a timeout or an answer that cannot be read as
 * MODEL_UNAVAILABLE, a failure the provider reports inside its stream as the status it stands for.
 * A provider that cannot be reached, or that refuses the key, is the first thing a new install
 * meets: those messages name the address and the setting to change (never the key itself).
 */
export function chatError(error: unknown, provider: ProviderName): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ProviderUnreachableError) {
    return new AppError('MODEL_UNAVAILABLE', `${provider} is unreachable at ${error.address} (set ${error.setting})`, {
      details: { provider, reason: 'unreachable', setting: error.setting },
      cause: error,
    });
  }
  if (error instanceof ProviderTimeoutError) {
    const message =
      error.phase === 'first-byte'
        ? `${provider} did not answer within ${error.timeoutMs} ms (PROVIDER_TIMEOUT_MS)`
        : `${provider} stopped sending its answer for ${error.timeoutMs} ms (PROVIDER_TIMEOUT_MS)`;
    return new AppError('MODEL_UNAVAILABLE', message, { details: { provider, reason: 'timeout' }, cause: error });
  }
  if (error instanceof ProviderProtocolError) {
    const message =
      error.reason === 'cut' ? `${provider} closed the connection before its answer ended` : `${provider} sent an answer that could not be read`;
    return new AppError('MODEL_UNAVAILABLE', message, { details: { provider, reason: error.reason }, cause: error });
  }
  if (error instanceof ProviderStreamError) {
    return upstreamStatusError(error.status, provider, { operation: generating, cause: error });
  }
  const keySetting = providerSettingNames[provider].key;
  if (error instanceof ProviderHttpError && (error.status === 401 || error.status === 403) && keySetting !== undefined) {
    // Whose key it was is not known here: the caller's apiKey when one was sent, else the server's.
    return new AppError('INVALID_REQUEST', `${provider} rejected the API key while ${generating} (send another apiKey, or set ${keySetting})`, {
      details: { provider, status: error.status, setting: keySetting },
      cause: error,
    });
  }
  return upstreamError(error, provider, { operation: generating });
}
