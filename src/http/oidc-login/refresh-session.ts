import { createHash } from 'node:crypto';
import { refreshTokenGrant } from 'openid-client';
import { AppError } from '../../core/errors/app-error.js';
import { acceptAccessToken } from './accept-access-token.js';
import { exchangeFailure } from './identity-provider-client.js';
import type { LoginContext } from './login-context.js';
import type { WebSession } from './login-cookies.js';
import { accessTokenOf, sessionFrom } from './token-response.js';

/** A token with less than this left is refreshed now, so the SPA never sends one that expires on the way. */
export const refreshAheadMs = 60_000;

/**
 * Providers rotate refresh tokens, and some revoke the whole grant when a spent one is used again
 * (oidc-provider, Keycloak with rotation): two tabs asking at once must share one refresh, not race.
 */
const inFlight = new Map<string, Promise<WebSession | null>>();

/**
 * A tab whose request left with the cookie from before another tab's refresh, and arrives just
 * after that refresh finished, would replay the spent token: the provider refuses it (both tabs
 * signed out) or revokes the grant. Finished refreshes are kept this long for such late arrivals,
 * which present the same sealed cookie, so they learn nothing the first tab did not.
 */
export const refreshGraceMs = 30_000;
/** Bounds the memory a burst of sign-ins can take; the oldest renewals go first. */
const maxFinished = 1_000;
const finished = new Map<string, { session: WebSession; until: number }>();

export function needsRefresh(session: WebSession): boolean {
  return session.accessExpiresAt - Date.now() < refreshAheadMs;
}

/** A renewed session, or null when the provider no longer honours the refresh token (sign in again). */
export function refreshSession(context: LoginContext, session: WebSession, ip: string): Promise<WebSession | null> {
  const { refreshToken } = session;
  if (!refreshToken) return Promise.resolve(null);
  const key = createHash('sha256').update(refreshToken).digest('base64url');
  const renewed = recentRenewal(key);
  if (renewed) return Promise.resolve(renewed);
  let running = inFlight.get(key);
  if (!running) {
    running = renew(context, session, refreshToken, ip)
      .then((result) => {
        if (result) remember(key, result);
        return result;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, running);
  }
  return running;
}

function recentRenewal(key: string): WebSession | null {
  const entry = finished.get(key);
  if (!entry) return null;
  const now = Date.now();
  if (entry.until > now && entry.session.accessExpiresAt > now) return entry.session;
  finished.delete(key);
  return null;
}

function remember(key: string, session: WebSession): void {
  const now = Date.now();
  // Entries all live equally long, so insertion order is expiry order: stop at the first live one.
  for (const [oldKey, entry] of finished) {
    if (entry.until > now && finished.size < maxFinished) break;
    finished.delete(oldKey);
  }
  finished.set(key, { session, until: now + refreshGraceMs });
}

async function renew(context: LoginContext, session: WebSession, refreshToken: string, ip: string): Promise<WebSession | null> {
  const configuration = await context.provider.get();
  let tokens;
  try {
    tokens = await refreshTokenGrant(configuration, refreshToken, context.settings.resource ? { resource: context.settings.resource } : undefined);
  } catch (error) {
    const failure = exchangeFailure(error, 'token refresh');
    // Refused (expired, revoked, already used): the session is over; unreachable: try again later.
    if (failure.code === 'INVALID_REQUEST') return null;
    throw failure;
  }
  const user = await acceptAccessToken(context, accessTokenOf(tokens), ip).catch((error: unknown) => {
    if (error instanceof AppError && error.code === 'INTERNAL_ERROR') return null;
    throw error;
  });
  return user ? sessionFrom(tokens, user, session) : null;
}
