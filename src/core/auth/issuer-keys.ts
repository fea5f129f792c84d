import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';

export interface IssuerKeysOptions {
  /** OIDC_ISSUER_BASE_URL, without a trailing slash. */
  issuerUrl: string;
  /** Each request to the identity provider gives up after this long (never a hang). */
  timeoutMs: number;
  logger: Logger;
  /** Keys older than this are refetched in the background, the old set serving meanwhile. */
  maxAgeMs?: number;
  /** The least time between two fetches prompted by an unknown `kid`, so forged kids cannot flood the provider. */
  unknownKeyCooldownMs?: number;
  /** After a failed fetch, callers get the same 503 at once for this long instead of waiting again. */
  failureBackoffMs?: number;
}

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;

/**
 * The identity provider's signing keys: its discovery document read once, its JWKS cached. An
 * unknown `kid` refetches the set (that is how a rotated-in key is learnt, and how a removed one is
 * forgotten); a stale set is refreshed in the background while it keeps serving, so a provider
 * outage after start-up does not lock anyone out. Only when no usable set exists does an
 * unreachable provider fail a request, with 503 SERVICE_UNAVAILABLE.
 */
export class IssuerKeys {
  private readonly maxAgeMs: number;
  private readonly unknownKeyCooldownMs: number;
  private readonly failureBackoffMs: number;
  private discovered: { issuer: string; jwksUri: string } | undefined;
  private keySet: LocalKeySet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;
  private failure: { at: number; error: AppError } | undefined;
  private publishedKeys = '';
  /**
   * Counts the changes of the published key set: a verdict reached under an older set must be
   * reached again. A refetch that finds the same keys does not count, so forged `kid`s, which
   * cause refetches, cannot make every remembered verdict be redone.
   */
  generation = 0;

  constructor(private readonly options: IssuerKeysOptions) {
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60 * 1000;
    this.unknownKeyCooldownMs = options.unknownKeyCooldownMs ?? 1000;
    this.failureBackoffMs = options.failureBackoffMs ?? 1000;
  }

  /** The issuer exactly as the provider's discovery document names it: what `iss` must equal. */
  async issuer(): Promise<string> {
    if (!this.discovered) await this.refresh();
    return (this.discovered as { issuer: string }).issuer;
  }

  /** The key for a token's header, in the shape jose's jwtVerify takes. */
  readonly getKey: JWTVerifyGetKey = async (header, token) => {
    if (!this.keySet) await this.refresh();
    else if (Date.now() - this.fetchedAt > this.maxAgeMs) this.refreshInBackground();
    const keySet = this.keySet as LocalKeySet;
    try {
      return await keySet(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || Date.now() - this.fetchedAt < this.unknownKeyCooldownMs) throw error;
      await this.refresh();
      return (this.keySet as LocalKeySet)(header, token);
    }
  };

  /** Fetches discovery and keys ahead of the first request; a failure is only logged. */
  warmUp(): void {
    this.refreshInBackground();
  }

  private refreshInBackground(): void {
    // A failure is logged where the fetch fails, once per attempt; nothing more to do here.
    this.refresh().catch(() => undefined);
  }

  /** One fetch at a time; callers arriving meanwhile share it. */
  private refresh(): Promise<void> {
    if (this.failure && Date.now() - this.failure.at < this.failureBackoffMs) return Promise.reject(this.failure.error);
    this.pending ??= this.fetchKeys()
      .then(
        () => {
          this.failure = undefined;
        },
        (error: unknown) => {
          const unavailable = error instanceof AppError ? error : providerUnavailable('unexpected', error);
          this.failure = { at: Date.now(), error: unavailable };
          this.options.logger.warn(
            { reason: unavailable.details.reason, cause: describeCause(unavailable.cause), cachedKeys: this.keySet !== undefined },
            'the identity provider could not be reached for its keys',
          );
          throw unavailable;
        },
      )
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }

  private async fetchKeys(): Promise<void> {
    this.discovered ??= await this.discover();
    const body = await this.fetchJson(this.discovered.jwksUri, 'keys');
    let keySet: LocalKeySet;
    try {
      keySet = createLocalJWKSet(body as JSONWebKeySet);
    } catch (error) {
      throw providerUnavailable('invalid key set', error);
    }
    const published = JSON.stringify((body as JSONWebKeySet).keys);
    if (published !== this.publishedKeys) {
      this.publishedKeys = published;
      this.generation += 1;
    }
    this.keySet = keySet;
    this.fetchedAt = Date.now();
  }

  private async discover(): Promise<{ issuer: string; jwksUri: string }> {
    const document = await this.fetchJson(`${this.options.issuerUrl}/.well-known/openid-configuration`, 'discovery');
    const { issuer, jwks_uri: jwksUri } = (typeof document === 'object' && document !== null ? document : {}) as Record<string, unknown>;
    // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for. Some
    // providers (Auth0) write it with a trailing slash, which is the same issuer.
    if (typeof issuer !== 'string' || issuer.replace(/\/+$/, '') !== this.options.issuerUrl) {
      this.options.logger.error({ configured: this.options.issuerUrl, discovered: issuer }, 'the discovery document names another issuer; check OIDC_ISSUER_BASE_URL');
      throw providerUnavailable('issuer mismatch');
    }
    if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri) || !/^https?:$/.test(new URL(jwksUri).protocol)) {
      throw providerUnavailable('no jwks_uri');
    }
    return { issuer, jwksUri };
  }

  private async fetchJson(url: string, what: string): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (error) {
      throw providerUnavailable(`${what} unreachable`, error);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw providerUnavailable(`${what} answered ${response.status}`);
    }
    try {
      return await response.json();
    } catch (error) {
      throw providerUnavailable(`${what} not JSON`, error);
    }
  }
}

function describeCause(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined;
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}

function providerUnavailable(reason: string, cause?: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'The identity provider cannot be reached; try again shortly', {
    details: { reason },
    headers: { 'Retry-After': '1' },
    cause,
  });
}
