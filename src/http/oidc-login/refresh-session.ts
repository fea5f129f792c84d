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

export function needsRefresh(session: WebSession): boolean {
  return session.accessExpiresAt - Date.now() < refreshAheadMs;
}

/** A renewed session, or null when the provider no longer honours the refresh token (sign in again). */
export function refreshSession(context: LoginContext, session: WebSession, ip: string): Promise<WebSession | null> {
  const { refreshToken } = session;
  if (!refreshToken) return Promise.resolve(null);
  const key = createHash('sha256').update(refreshToken).digest('base64url');
  let running = inFlight.get(key);
  if (!running) {
    running = renew(context, session, refreshToken, ip).finally(() => inFlight.delete(key));
    inFlight.set(key, running);
  }
  return running;
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
