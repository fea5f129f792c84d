import { SealedCookie, cookieName } from './sealed-cookie.js';
import type { LoginSettings } from './login-settings.js';

/** Between /auth/login and /auth/callback: the PKCE verifier, state and nonce, and where to go after. */
export interface LoginTransaction {
  [claim: string]: unknown;
  verifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

/** The signed-in browser's tokens. Encrypted, so the refresh and ID tokens never reach page scripts. */
export interface WebSession {
  [claim: string]: unknown;
  accessToken: string;
  refreshToken?: string;
  /** Kept for the logout's `id_token_hint`. */
  idToken?: string;
  /** Epoch milliseconds when the access token expires. */
  accessExpiresAt: number;
  /** Who signed in, for the logout's audit entry once the access token has expired. */
  userId: string;
}

/** Long enough to type a password and pass a second factor; short enough that a stale one is useless. */
const transactionSeconds = 10 * 60;
/** With a refresh token the session lasts this long past its last refresh; the provider may end it earlier. */
export const refreshableSessionSeconds = 7 * 24 * 60 * 60;

export interface LoginCookies {
  transaction: SealedCookie<LoginTransaction>;
  session: SealedCookie<WebSession>;
}

export function loginCookies(settings: LoginSettings): LoginCookies {
  const { secret, secure } = settings;
  return {
    // Sent only to /auth/*: no other request carries it.
    transaction: new SealedCookie<LoginTransaction>(secret, 'login-transaction', {
      name: cookieName('assistant-login', secure, '/auth'),
      path: '/auth',
      secure,
      maxAgeSeconds: transactionSeconds,
    }),
    // Also only /auth/*: the API authenticates by bearer token alone, so the cookie never rides
    // along on API calls (no CSRF surface there, and no 3 kB extra per request).
    session: new SealedCookie<WebSession>(secret, 'web-session', {
      name: cookieName('assistant-session', secure, '/auth'),
      path: '/auth',
      secure,
      maxAgeSeconds: refreshableSessionSeconds,
    }),
  };
}

/** How long the session cookie should live: as long as it can be refreshed, else as long as its access token. */
export function sessionLifetimeSeconds(session: WebSession): number {
  if (session.refreshToken) return refreshableSessionSeconds;
  return Math.max(1, Math.ceil((session.accessExpiresAt - Date.now()) / 1000));
}
