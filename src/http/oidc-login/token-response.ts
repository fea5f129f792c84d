import type { TokenEndpointResponse, TokenEndpointResponseHelpers } from 'openid-client';
import type { User } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import type { WebSession } from './login-cookies.js';

/** When the provider names no lifetime: assume a short one, so the session route refreshes early rather than late. */
const assumedLifetimeSeconds = 300;

/**
 * A web session from a token response and the user its access token proved to be. On a refresh
 * the provider may omit the refresh and ID tokens; the earlier ones then stay in use.
 */
export function sessionFrom(tokens: TokenEndpointResponse & TokenEndpointResponseHelpers, user: User, earlier?: WebSession): WebSession {
  const lifetime = tokens.expiresIn() ?? assumedLifetimeSeconds;
  const fromClaims = user.tokenExpiresAt;
  const refreshToken = tokens.refresh_token ?? earlier?.refreshToken;
  const idToken = tokens.id_token ?? earlier?.idToken;
  return {
    accessToken: accessTokenOf(tokens),
    // The token's own `exp` is authoritative when known; `expires_in` is the provider's statement of it.
    accessExpiresAt: fromClaims !== undefined && fromClaims > 0 ? fromClaims : Date.now() + lifetime * 1000,
    userId: user.id,
    ...(refreshToken ? { refreshToken } : {}),
    ...(idToken ? { idToken } : {}),
  };
}

export function accessTokenOf(tokens: TokenEndpointResponse): string {
  if (typeof tokens.access_token !== 'string' || tokens.access_token === '') {
    throw new AppError('SERVICE_UNAVAILABLE', 'The identity provider answered without an access token', { details: { reason: 'no access token' } });
  }
  return tokens.access_token;
}
