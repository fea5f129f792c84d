import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startService, type StartedService } from '../../src/app.js';
import { loadConfig } from '../../src/core/config/load-config.js';
import { createLogger } from '../../src/core/logger.js';
import { refreshGraceMs } from '../../src/http/oidc-login/refresh-session.js';
import { closedOrigin } from '../helpers/closed-origin.js';
import { CookieBrowser, cookieAttributes, type Hop } from '../helpers/cookie-browser.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort, startLoginIdentityProvider, type LoginIdentityProvider } from '../helpers/login-identity-provider.js';
import { expectEnvelope, request, startTestService, type TestResponse } from '../helpers/test-service.js';

// The web interface's sign-in: a browser (fetch, a cookie jar, redirects one hop at a time) goes
// through /auth/login, the real provider's login and consent pages and /auth/callback, and the
// token /auth/session hands the page works as a bearer token on the API.

const oidcSecret = 'web-login-cookie-secret-0123456789-abcdefghijklmnop';
const sessionCookie = 'assistant-session';
const loginCookie = 'assistant-login';

interface LoginService extends AsyncDisposable {
  url: string;
  service: StartedService;
  logs: () => string;
}

/** The service on a port known beforehand (OIDC_BASE_URL names it), logging at debug into a buffer. */
async function startLoginService(port: number, env: Record<string, string>): Promise<LoginService> {
  const database: TestDatabase = await createTestDatabase('sqlite');
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const config = loadConfig(
    { PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: database.url, LOG_LEVEL: 'debug', RATE_LIMIT_ENABLED: 'false', ...env },
    null,
  );
  const service = await startService(config, createLogger('debug', sink));
  return {
    url: service.url,
    service,
    logs: () => lines.join(''),
    async [Symbol.asyncDispose]() {
      await service.stop();
      await database.drop();
    },
  };
}

function loginEnv(idp: LoginIdentityProvider, baseUrl: string, confidential = true): Record<string, string> {
  return {
    AUTH_ENABLED: 'true',
    OIDC_ISSUER_BASE_URL: idp.issuer,
    OIDC_CLIENT_ID: confidential ? idp.clientId : idp.publicClientId,
    ...(confidential ? { OIDC_CLIENT_SECRET: idp.clientSecret } : {}),
    OIDC_AUDIENCE: idp.audience,
    OIDC_BASE_URL: baseUrl,
    OIDC_SECRET: oidcSecret,
    ALLOWED_ORIGINS: 'http://trusted.example',
  };
}

/**
 * From /auth/login through the provider's pages, stopping at the redirect to /auth/callback
 * (returned, not followed, so tests can tamper with it).
 */
async function reachCallback(browser: CookieBrowser, serviceUrl: string, login: string, returnTo?: string): Promise<{ start: Hop; callbackUrl: string }> {
  const start = await browser.request(`${serviceUrl}/auth/login${returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(returnTo)}`}`);
  expect(start.status).toBe(302);
  let next = start.location;
  for (let hop = 0; hop < 20 && next !== null; hop += 1) {
    if (next.startsWith(`${serviceUrl}/auth/callback`)) return { start, callbackUrl: next };
    const reply = await browser.request(next);
    if (reply.status >= 300 && reply.status < 400) {
      next = reply.location;
      continue;
    }
    expect(reply.status, reply.text).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(reply.text)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(reply.text)?.[1];
    if (!action || !prompt) throw new Error(`unexpected provider page: ${reply.text.slice(0, 300)}`);
    const form: Record<string, string> = prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt };
    const submitted = await browser.request(new URL(action, next).href, { form });
    next = submitted.location;
  }
  throw new Error('the sign-in never came back to /auth/callback');
}

async function signIn(browser: CookieBrowser, serviceUrl: string, login: string, returnTo?: string): Promise<Hop> {
  const { callbackUrl } = await reachCallback(browser, serviceUrl, login, returnTo);
  return browser.request(callbackUrl);
}

async function sessionOf(browser: CookieBrowser, serviceUrl: string, headers: Record<string, string> = {}): Promise<TestResponse & { setCookies: string[] }> {
  const hop = await browser.request(`${serviceUrl}/auth/session`, { headers });
  return { status: hop.status, headers: hop.headers, text: hop.text, body: JSON.parse(hop.text) as unknown, setCookies: hop.setCookies };
}

async function authEntries(service: LoginService, userId: string) {
  const entries = await service.service.deps.store.db.auditEntry.findMany({ where: { type: 'auth', userId }, orderBy: { timestamp: 'asc' } });
  return entries.map((entry) => (entry.details as { action: string }).action);
}

describe('web sign-in with a confidential client', () => {
  let idp: LoginIdentityProvider;
  let service: LoginService;
  let baseUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    idp = await startLoginIdentityProvider({ serviceBaseUrl: baseUrl });
    idp.setRoles('alice', ['Dev']);
    idp.setRoles('bob', ['Lead']);
    service = await startLoginService(port, loginEnv(idp, baseUrl));
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  it('/auth/login redirects to the provider with PKCE S256, state, nonce, the resource and the callback address', async () => {
    const browser = new CookieBrowser();
    const start = await browser.request(`${service.url}/auth/login`);
    expect(start.status).toBe(302);
    const target = new URL(start.location ?? '');
    expect(`${target.origin}${target.pathname}`).toBe(`${idp.issuer}/auth`);
    const params = target.searchParams;
    expect(params.get('response_type')).toBe('code');
    expect(params.get('client_id')).toBe(idp.clientId);
    expect(params.get('redirect_uri')).toBe(`${baseUrl}/auth/callback`);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(params.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(params.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(params.get('resource')).toBe(idp.audience);
    expect(params.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'offline_access']));
    const attributes = cookieAttributes(start.setCookies, loginCookie);
    expect(attributes).not.toBeNull();
    expect(attributes).toContain('httponly');
    expect(attributes).toContain('samesite=lax');
    expect(attributes).toContain('path=/auth');
    // Plain http base URL: no Secure flag, or the browser would drop the cookie.
    expect(attributes).not.toContain('secure');
    // The cookie is sealed: neither the verifier nor the state can be read from it.
    expect(browser.cookie(loginCookie)).not.toContain(params.get('state'));
  });

  it('a full sign-in sets an encrypted session cookie, and /auth/session hands over a token the API accepts', async () => {
    const browser = new CookieBrowser();
    const callback = await signIn(browser, service.url, 'alice');
    expect(callback.status, callback.text).toBe(302);
    expect(callback.location).toBe(`${service.url}/`);
    const attributes = cookieAttributes(callback.setCookies, sessionCookie);
    expect(attributes).toContain('httponly');
    expect(attributes).toContain('samesite=lax');
    // The login transaction is spent.
    expect(browser.cookie(loginCookie)).toBeUndefined();

    const session = await sessionOf(browser, service.url);
    expect(session.status).toBe(200);
    expect(session.headers.get('cache-control')).toBe('no-store');
    expect(session.body).toMatchObject({ authenticated: true, authEnabled: true, user: { userId: 'alice', roles: ['Dev'] } });
    const { accessToken, expiresAt } = session.body as { accessToken: string; expiresAt: string };
    expect(browser.cookie(sessionCookie)).not.toContain(accessToken.split('.')[1]);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(200_000);

    const me = await request(service.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${accessToken}` } });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ userId: 'alice', roles: ['Dev'], authEnabled: true });
    // One login entry: written at the callback, and not again when the page uses the token.
    expect(await authEntries(service, 'alice')).toEqual(['login']);
  });

  it('the session reply is never shared with another origin, not even an allowed one', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'bob');
    const fromTrusted = await sessionOf(browser, service.url, { origin: 'http://trusted.example' });
    expect(fromTrusted.status).toBe(200);
    expect(fromTrusted.headers.get('access-control-allow-origin')).toBeNull();
    // Other API paths do give the allowed origin its CORS headers: the difference is deliberate.
    const status = await request(service.url, 'GET', '/api/auth/me', { headers: { origin: 'http://trusted.example' } });
    expect(status.headers.get('access-control-allow-origin')).toBe('http://trusted.example');
    const crossSite = await browser.request(`${service.url}/auth/session`, { headers: { 'sec-fetch-site': 'cross-site' } });
    expectEnvelope({ status: crossSite.status, headers: crossSite.headers, text: crossSite.text, body: JSON.parse(crossSite.text) }, 403, 'SECURITY_VIOLATION');
    expect(crossSite.text).not.toContain('accessToken');
  });

  it('returnTo brings the browser back to a path of this service', async () => {
    const browser = new CookieBrowser();
    const callback = await signIn(browser, service.url, 'alice', '/conversations?tab=recent#top');
    expect(callback.status).toBe(302);
    expect(callback.location).toBe(`${service.url}/conversations?tab=recent#top`);
  });

  it.each([
    '//evil.example/x',
    'https://evil.example/',
    '/\\evil.example',
    'javascript:alert(1)',
    'evil.example',
    '/\r\nSet-Cookie:x=1',
    // Dot segments the URL parser collapses into a protocol-relative `//evil.example`.
    '/.//evil.example',
    '/..//evil.example',
    '/%2e//evil.example',
    '/a/..//evil.example/x',
  ])(
    'returnTo %j is refused as an open redirect',
    async (returnTo) => {
      const browser = new CookieBrowser();
      const hop = await browser.request(`${service.url}/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
      const error = expectEnvelope({ status: hop.status, headers: hop.headers, text: hop.text, body: JSON.parse(hop.text) }, 400, 'INVALID_REQUEST');
      expect(error.details).toMatchObject({ issues: [{ path: ['returnTo'] }] });
      expect(hop.location).toBeNull();
      expect(browser.cookie(loginCookie)).toBeUndefined();
    },
  );

  it('a callback whose state is not the one this browser started is refused, and the sign-in is spent', async () => {
    const browser = new CookieBrowser();
    const { callbackUrl } = await reachCallback(browser, service.url, 'alice');
    const forged = new URL(callbackUrl);
    forged.searchParams.set('state', 'forged-state-value');
    const refused = await browser.request(forged.href);
    const error = expectEnvelope({ status: refused.status, headers: refused.headers, text: refused.text, body: JSON.parse(refused.text) }, 400, 'INVALID_REQUEST');
    expect(error.details.reason).toBe('state_mismatch');
    expect(browser.cookie(sessionCookie)).toBeUndefined();
    // The genuine callback after that finds no sign-in under way: a state is good for one try.
    const genuine = await browser.request(callbackUrl);
    expect(genuine.status).toBe(400);
    expect(JSON.parse(genuine.text).error.details.reason).toBe('no_login_transaction');
    expect(browser.cookie(sessionCookie)).toBeUndefined();
  });

  it('a callback without a sign-in under way, or with the provider reporting an error, answers 400 envelopes', async () => {
    const stranger = await request(service.url, 'GET', '/auth/callback?code=abc&state=xyz');
    expect(expectEnvelope(stranger, 400, 'INVALID_REQUEST').details.reason).toBe('no_login_transaction');

    const browser = new CookieBrowser();
    const start = await browser.request(`${service.url}/auth/login`);
    const state = new URL(start.location ?? '').searchParams.get('state') ?? '';
    const denied = await browser.request(`${service.url}/auth/callback?error=access_denied&error_description=no&state=${state}&iss=${encodeURIComponent(idp.issuer)}`);
    const error = expectEnvelope({ status: denied.status, headers: denied.headers, text: denied.text, body: JSON.parse(denied.text) }, 400, 'INVALID_REQUEST');
    expect(error.details.reason).toBe('access_denied');
  });

  it('a code exchanged with the wrong verifier (a stolen code in another browser) is refused by the provider', async () => {
    const victim = new CookieBrowser();
    const { callbackUrl } = await reachCallback(victim, service.url, 'alice');
    const attacker = new CookieBrowser();
    const attackerStart = await attacker.request(`${service.url}/auth/login`);
    const attackerState = new URL(attackerStart.location ?? '').searchParams.get('state') ?? '';
    const stolen = new URL(callbackUrl);
    stolen.searchParams.set('state', attackerState);
    const reply = await attacker.request(stolen.href);
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text).error.details.reason).toBe('invalid_grant');
    expect(attacker.cookie(sessionCookie)).toBeUndefined();
  });

  it('an altered session cookie counts as no session', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'alice');
    const sealed = browser.cookie(sessionCookie) ?? '';
    const flipped = `${sealed.slice(0, -6)}${sealed.slice(-6, -5) === 'A' ? 'B' : 'A'}${sealed.slice(-5)}`;
    browser.setCookie(sessionCookie, flipped, '/auth');
    const session = await sessionOf(browser, service.url);
    expect(session.body).toEqual({ success: true, authenticated: false, authEnabled: true });
  });

  it('logout clears the session, records it, and ends the provider session with the ID token hint', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'carol');
    expect((await sessionOf(browser, service.url)).body.authenticated).toBe(true);
    const logout = await browser.request(`${service.url}/auth/logout`);
    expect(logout.status).toBe(302);
    const target = new URL(logout.location ?? '');
    expect(`${target.origin}${target.pathname}`).toBe(`${idp.issuer}/session/end`);
    expect(target.searchParams.get('post_logout_redirect_uri')).toBe(`${baseUrl}/`);
    expect(target.searchParams.get('id_token_hint')?.split('.')).toHaveLength(3);
    expect(browser.cookie(sessionCookie)).toBeUndefined();
    expect((await sessionOf(browser, service.url)).body).toEqual({ success: true, authenticated: false, authEnabled: true });
    expect(await authEntries(service, 'carol')).toEqual(['login', 'logout']);

    // The provider honours the hint: its confirmation page is shown, not an error.
    const endSession = await browser.request(target.href);
    expect(endSession.status).toBe(200);
    expect(endSession.text).toMatch(/logout|sign-out/i);

    const again = await browser.request(`${service.url}/auth/logout`, { method: 'POST' });
    expect(again.status).toBe(302);
    expect(again.location).toBe(`${service.url}/`);
    expect(await authEntries(service, 'carol')).toEqual(['login', 'logout']);
  });

  it('GET /auth/logout started by another site is refused and keeps the session; POST and same-origin GET still log out', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'grace');
    for (const site of ['cross-site', 'same-site']) {
      const refused = await browser.request(`${service.url}/auth/logout`, { headers: { 'sec-fetch-site': site } });
      expectEnvelope({ status: refused.status, headers: refused.headers, text: refused.text, body: JSON.parse(refused.text) }, 403, 'SECURITY_VIOLATION');
      expect(refused.setCookies).toEqual([]);
      expect((await sessionOf(browser, service.url)).body.authenticated).toBe(true);
    }
    const fromOwnPage = await browser.request(`${service.url}/auth/logout`, { headers: { 'sec-fetch-site': 'same-origin' } });
    expect(fromOwnPage.status).toBe(302);
    expect(browser.cookie(sessionCookie)).toBeUndefined();

    await signIn(browser, service.url, 'grace');
    const posted = await browser.request(`${service.url}/auth/logout`, { method: 'POST', headers: { 'sec-fetch-site': 'same-site' } });
    expect(posted.status).toBe(302);
    expect(browser.cookie(sessionCookie)).toBeUndefined();
  });

  it('the log holds the sign-in requests but never a code, token or secret', async () => {
    const browser = new CookieBrowser();
    const { callbackUrl } = await reachCallback(browser, service.url, 'dave');
    const code = new URL(callbackUrl).searchParams.get('code') ?? '';
    expect(code.length).toBeGreaterThan(10);
    await browser.request(callbackUrl);
    const { accessToken } = (await sessionOf(browser, service.url)).body as { accessToken: string };
    await browser.request(`${service.url}/auth/logout`);
    const logs = service.logs();
    expect(logs).toContain('/auth/callback?code=[redacted]');
    for (const secret of [code, accessToken, accessToken.split('.')[2] ?? 'x', idp.clientSecret, oidcSecret]) {
      expect(logs).not.toContain(secret);
    }
  });
});

describe('web sign-in with a public client and short-lived tokens', () => {
  let idp: LoginIdentityProvider;
  let service: LoginService;

  beforeAll(async () => {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // Shorter than the minute ahead of expiry at which the session route refreshes: every read refreshes.
    idp = await startLoginIdentityProvider({ serviceBaseUrl: baseUrl, accessTokenTtl: 40 });
    idp.setRoles('erin', ['User']);
    service = await startLoginService(port, loginEnv(idp, baseUrl, false));
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  it('PKCE alone signs in, and /auth/session refreshes a token about to expire, updating the cookie', async () => {
    const browser = new CookieBrowser();
    const callback = await signIn(browser, service.url, 'erin');
    expect(callback.status, callback.text).toBe(302);
    const firstCookie = browser.cookie(sessionCookie);

    const first = await sessionOf(browser, service.url);
    expect(first.body).toMatchObject({ authenticated: true, user: { userId: 'erin', roles: ['User'] } });
    expect(cookieAttributes(first.setCookies, sessionCookie)).not.toBeNull();
    expect(browser.cookie(sessionCookie)).not.toBe(firstCookie);
    const second = await sessionOf(browser, service.url);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);

    for (const token of [first.body.accessToken as string, second.body.accessToken as string]) {
      const me = await request(service.url, 'GET', '/api/auth/me', { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
      expect(me.body.userId).toBe('erin');
    }
    // The provider's `sid` ties the refreshed tokens to the first sign-in: one login, then refreshes.
    expect(await authEntries(service, 'erin')).toEqual(['login', 'refresh', 'refresh']);
  });

  it('a tab still holding the cookie from before another tab’s refresh gets the renewed session, not a replayed refresh token', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'gina');
    const beforeRefresh = browser.cookie(sessionCookie) ?? '';
    const refreshesBefore = idp.refreshGrants();
    const first = await sessionOf(browser, service.url);
    expect(first.body.authenticated).toBe(true);

    // The second tab's request left before the first tab's reply set the new cookie.
    const otherTab = new CookieBrowser();
    otherTab.setCookie(sessionCookie, beforeRefresh, '/auth');
    const late = await sessionOf(otherTab, service.url);
    expect(late.body).toMatchObject({ authenticated: true, user: { userId: 'gina' } });
    expect(late.body.accessToken).toBe(first.body.accessToken);
    expect(otherTab.cookie(sessionCookie)).toBeDefined();
    expect(idp.refreshGrants() - refreshesBefore).toBe(1);

    // Neither tab was signed out: both refresh again on the renewed refresh token.
    expect((await sessionOf(browser, service.url)).body.authenticated).toBe(true);
    expect((await sessionOf(otherTab, service.url)).body.authenticated).toBe(true);
    expect(await authEntries(service, 'gina')).toEqual(['login', 'refresh', 'refresh']);
  });

  it('a spent refresh token (an old copy of the cookie) ends the session once the grace for late tabs is over', async () => {
    const browser = new CookieBrowser();
    await signIn(browser, service.url, 'frank');
    const stale = browser.cookie(sessionCookie) ?? '';
    expect((await sessionOf(browser, service.url)).body.authenticated).toBe(true);
    browser.setCookie(sessionCookie, stale, '/auth');
    // Only the clock moves (the service and the provider run in this process): timers stay real.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + refreshGraceMs + 1_000 });
    try {
      const replayed = await sessionOf(browser, service.url);
      expect(replayed.body).toEqual({ success: true, authenticated: false, authEnabled: true });
      expect(browser.cookie(sessionCookie)).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('web sign-in switched off or not configured', () => {
  it('AUTH_ENABLED=false: login and callback are 404, the session says auth is off, logout goes home', async () => {
    await using service = await startTestService('sqlite', { AUTH_ENABLED: 'false' });
    expectEnvelope(await service.request('GET', '/auth/login'), 404, 'NOT_FOUND');
    expectEnvelope(await service.request('GET', '/auth/callback?code=x&state=y'), 404, 'NOT_FOUND');
    const session = await service.request('GET', '/auth/session');
    expect(session.status).toBe(200);
    expect(session.body).toEqual({ success: true, authenticated: false, authEnabled: false });
    const logout = await fetch(`${service.url}/auth/logout`, { redirect: 'manual' });
    expect(logout.status).toBe(302);
    expect(logout.headers.get('location')).toBe('/');
  });

  it('AUTH_ENABLED=true without OIDC_BASE_URL and OIDC_SECRET: the service runs for bearer tokens, /auth/login names what is missing', async () => {
    await using service = await startTestService('sqlite', {
      AUTH_ENABLED: 'true',
      OIDC_ISSUER_BASE_URL: await closedOrigin(),
      OIDC_CLIENT_ID: 'assistant',
    });
    const error = expectEnvelope(await service.request('GET', '/auth/login'), 500, 'INTERNAL_ERROR');
    expect(error.details.missing).toEqual(['OIDC_BASE_URL', 'OIDC_SECRET']);
    expect(error.message).toContain('OIDC_SECRET');
    expect((await service.request('GET', '/auth/session')).body).toEqual({ success: true, authenticated: false, authEnabled: true });
  });

  it('an unreachable identity provider: /auth/login answers 503, and logout still clears the session locally', async () => {
    await using service = await startTestService('sqlite', {
      AUTH_ENABLED: 'true',
      OIDC_ISSUER_BASE_URL: await closedOrigin(),
      OIDC_CLIENT_ID: 'assistant',
      OIDC_BASE_URL: 'http://127.0.0.1:1',
      OIDC_SECRET: oidcSecret,
    });
    const error = expectEnvelope(await service.request('GET', '/auth/login'), 503, 'SERVICE_UNAVAILABLE');
    expect(error.details.reason).toBe('discovery failed');
    const logout = await fetch(`${service.url}/auth/logout`, { redirect: 'manual' });
    expect(logout.status).toBe(302);
    expect(logout.headers.get('location')).toBe('/');
  });
});
