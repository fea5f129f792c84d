// The web login lives on the server (/auth/login, /auth/callback, /auth/logout); the page asks
// /auth/session who it is and, with authentication on, for the access token to send.

export interface AuthSession {
  authenticated: boolean;
  authEnabled: boolean;
  accessToken?: string;
  expiresAt?: string;
  user?: { userId?: string; roles?: string[]; [claim: string]: unknown };
}

const authOff: AuthSession = { authenticated: false, authEnabled: false };

/** Reads the session; a server without the login routes (404) or a broken answer counts as auth off. */
export async function fetchSession(): Promise<AuthSession> {
  try {
    const response = await fetch('/auth/session', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
    if (!response.ok) return authOff;
    const body = (await response.json()) as Partial<AuthSession>;
    if (typeof body.authEnabled !== 'boolean') return authOff;
    return { ...body, authenticated: body.authenticated === true, authEnabled: body.authEnabled };
  } catch {
    return authOff;
  }
}

/** The token holder every transport reads from, renewed from /auth/session before it expires. */
export class TokenHolder {
  #token: string | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #listeners = new Set<(token: string) => void>();

  constructor(session: AuthSession) {
    this.#token = session.accessToken;
    this.#schedule(session.expiresAt);
  }

  get token(): string | undefined {
    return this.#token;
  }

  /** Called with each renewed token (open WebSockets send it on). */
  onRenew(listener: (token: string) => void): void {
    this.#listeners.add(listener);
  }

  /** Appends `access_token` for transports that cannot send headers (WebSockets, EventSource). */
  withToken(url: URL): URL {
    if (this.#token) url.searchParams.set('access_token', this.#token);
    return url;
  }

  #schedule(expiresAt: string | undefined): void {
    clearTimeout(this.#timer);
    if (!expiresAt || !this.#token) return;
    // A minute early, so no request leaves with a token about to lapse.
    const delay = Math.max(5_000, Date.parse(expiresAt) - Date.now() - 60_000);
    this.#timer = setTimeout(() => void this.#renew(), delay);
  }

  async #renew(): Promise<void> {
    const session = await fetchSession();
    if (!session.accessToken) return;
    this.#token = session.accessToken;
    for (const listener of this.#listeners) listener(session.accessToken);
    this.#schedule(session.expiresAt);
  }
}
