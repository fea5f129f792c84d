// The web login lives on the server (/auth/login, /auth/callback, /auth/logout); the page asks
// /auth/session who it is and, with authentication on, for the access token to send.

export interface AuthSession {
  authenticated: boolean;
  authEnabled: boolean;
  accessToken?: string;
  expiresAt?: string;
  user?: { userId?: string; roles?: string[]; [claim: string]: unknown };
  /** How long the token had left when the reply was sent, by the server's own clock (its Date header). */
  lifetimeMs?: number;
}

const authOff: AuthSession = { authenticated: false, authEnabled: false };

/**
 * Reads the session. Only a server without the login routes (404) counts as auth off; any other
 * failure (network, 5xx, a broken answer) throws, so a caller can try again rather than conclude
 * the server wants no token.
 */
export async function fetchSession(): Promise<AuthSession> {
  const response = await fetch('/auth/session', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
  if (response.status === 404) return authOff;
  if (!response.ok) throw new Error(`/auth/session answered ${response.status}`);
  const body = (await response.json()) as Partial<AuthSession>;
  if (typeof body.authEnabled !== 'boolean') throw new Error('/auth/session sent no authEnabled');
  // expiresAt is on the server's clock; measured against the server's Date the lifetime does not
  // depend on how far this machine's clock is off.
  const serverNow = Date.parse(response.headers.get('date') ?? '') || Date.now();
  const lifetimeMs = body.expiresAt ? Date.parse(body.expiresAt) - serverNow : undefined;
  return { ...body, authenticated: body.authenticated === true, authEnabled: body.authEnabled, lifetimeMs };
}

// The server refreshes a token with less than a minute left; asking a little inside that window
// gets a fresh one while the old one still works.
const renewAheadMs = 50_000;
const minimumDelayMs = 5_000;
const maximumBackoffMs = 60_000;

/**
 * The token holder every transport reads from, renewed from /auth/session before it expires, when
 * the tab comes back into view (background timers are throttled) and when the API says 401.
 */
export class TokenHolder {
  #token: string | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When (this machine's clock) the token should be renewed. */
  #renewAt = Infinity;
  #failures = 0;
  #renewing: Promise<boolean> | null = null;
  readonly #listeners = new Set<(token: string) => void>();

  constructor(
    session: AuthSession,
    private readonly onSignedOut: () => void = () => undefined,
  ) {
    this.#token = session.accessToken;
    this.#schedule(session, false);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && Date.now() >= this.#renewAt) void this.renew();
    });
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

  /** Asks for the token now (calls made together share one request); true when it changed. */
  renew(): Promise<boolean> {
    if (!this.#token) return Promise.resolve(false);
    this.#renewing ??= this.#renew().finally(() => {
      this.#renewing = null;
    });
    return this.#renewing;
  }

  async #renew(): Promise<boolean> {
    clearTimeout(this.#timer);
    let session: AuthSession;
    try {
      session = await fetchSession();
    } catch (error) {
      // A passing failure (server restarting, network down) must not end renewal for good.
      this.#failures += 1;
      const backoff = Math.min(maximumBackoffMs, 2_000 * 2 ** (this.#failures - 1));
      console.warn(`token renewal failed, trying again in ${backoff / 1000}s`, error);
      this.#renewAt = Date.now() + backoff;
      this.#timer = setTimeout(() => void this.renew(), backoff);
      return false;
    }
    this.#failures = 0;
    if (!session.authEnabled || !session.accessToken) {
      this.#renewAt = Infinity;
      if (session.authEnabled) {
        this.#token = undefined;
        this.onSignedOut();
      }
      return false;
    }
    const changed = session.accessToken !== this.#token;
    this.#token = session.accessToken;
    if (changed) for (const listener of this.#listeners) listener(session.accessToken);
    this.#schedule(session, !changed);
    return changed;
  }

  /** `unchanged`: the server handed the same token back. */
  #schedule(session: AuthSession, unchanged: boolean): void {
    clearTimeout(this.#timer);
    this.#renewAt = Infinity;
    if (session.lifetimeMs === undefined || !this.#token) return;
    const lifetime = session.lifetimeMs;
    // Inside the refresh window already: a short-lived token is renewed halfway, one the server
    // could not refresh is asked about again once it has expired (the answer is then "signed out").
    const due = lifetime > renewAheadMs ? lifetime - renewAheadMs : unchanged ? lifetime + 1_000 : lifetime / 2;
    const delay = Math.max(minimumDelayMs, due);
    this.#renewAt = Date.now() + delay;
    this.#timer = setTimeout(() => void this.renew(), delay);
  }
}
