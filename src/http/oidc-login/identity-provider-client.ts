import {
  AuthorizationResponseError,
  ClientError,
  ClientSecretBasic,
  ClientSecretPost,
  allowInsecureRequests,
  discovery,
  None,
  ResponseBodyError,
  type Configuration,
} from 'openid-client';
import { AppError } from '../../core/errors/app-error.js';
import type { Logger } from '../../core/logger.js';
import type { LoginSettings } from './login-settings.js';

/** After a failed discovery, callers get the same 503 at once for this long instead of waiting again. */
const failureBackoffMs = 1000;

/**
 * The identity provider as openid-client sees it: its discovery document read on first need (the
 * service starts while the provider is down) and kept; a failure is retried by a later request.
 */
export class IdentityProviderClient {
  private configuration: Promise<Configuration> | undefined;
  private failedAt = Number.NEGATIVE_INFINITY;
  private lastFailure: AppError | undefined;

  constructor(
    private readonly settings: LoginSettings,
    private readonly logger: Logger,
  ) {}

  async get(): Promise<Configuration> {
    if (this.lastFailure && Date.now() - this.failedAt < failureBackoffMs) throw this.lastFailure;
    this.configuration ??= this.discover().catch((error: unknown) => {
      this.configuration = undefined;
      this.failedAt = Date.now();
      this.lastFailure = providerUnavailable('discovery failed');
      this.logger.warn({ cause: describe(error) }, 'the identity provider could not be discovered for web login');
      throw this.lastFailure;
    });
    return this.configuration;
  }

  private async discover(): Promise<Configuration> {
    const { issuerUrl, clientId, clientSecret, timeoutMs } = this.settings;
    const issuer = new URL(issuerUrl);
    // An http issuer is only ever talked to because the operator configured one (a local test
    // provider); openid-client refuses plain http unless told so.
    const insecure = issuer.protocol === 'http:';
    // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only as a warning sign; used solely for an http issuer the operator configured
    const options = { timeout: Math.ceil(timeoutMs / 1000), ...(insecure ? { execute: [allowInsecureRequests] } : {}) };
    if (!clientSecret) return discovery(issuer, clientId, undefined, None(), options);
    // client_secret_basic is OAuth's default method; a provider that lists only _post gets that.
    const found = await discovery(issuer, clientId, clientSecret, ClientSecretBasic(clientSecret), options);
    const methods = found.serverMetadata().token_endpoint_auth_methods_supported;
    if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
      return discovery(issuer, clientId, clientSecret, ClientSecretPost(clientSecret), options);
    }
    return found;
  }
}

export function providerUnavailable(reason: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The identity provider cannot be reached; try again shortly', {
    details: { reason },
    headers: { 'Retry-After': '1' },
  });
}

/**
 * A failed exchange with the provider as the caller should see it: unreachable, timed out or a 5xx
 * is 503; the provider refusing (an OAuth error, a bad state, nonce or ID token) is 400. Only the
 * OAuth error code goes into the reply, never a token or the provider's raw answer.
 */
export function exchangeFailure(error: unknown, step: string): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof ResponseBodyError) {
    if (error.status >= 500) return providerUnavailable(`${step} answered ${error.status}`);
    return AppError.invalid(`The identity provider refused the ${step}; sign in again`, { reason: error.error });
  }
  if (error instanceof AuthorizationResponseError) {
    return AppError.invalid('The identity provider did not authorize the sign-in', { reason: error.error });
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) return providerUnavailable(`${step} unreachable`);
  if (error instanceof ClientError) {
    if (error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT') return providerUnavailable(`${step} timed out`);
    const status = (error.cause as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number' && status >= 500) return providerUnavailable(`${step} answered ${status}`);
    return AppError.invalid(`The ${step} failed its checks; sign in again`, { reason: error.code ?? 'invalid_response' });
  }
  return new AppError('INTERNAL_ERROR', `The ${step} failed`);
}

/** A cause for the log: messages only, which never hold tokens (openid-client does not put them there). */
export function describe(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const inner = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.name}: ${error.message}${inner}`;
}
