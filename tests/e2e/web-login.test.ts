import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { describeWithBrowser, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import { freePort, startLoginIdentityProvider, type LoginIdentityProvider } from '../helpers/login-identity-provider.js';
import { expectEnvelope, request, startTestService, type TestResponse, type TestService } from '../helpers/test-service.js';

// The browser sign-in end to end: headless chromium opens the web interface with authentication
// on, follows Log in to the real identity provider (oidc-provider's login and consent pages),
// comes back signed in, chats as that user with the token /auth/session hands the page, and logs
// out through the provider's end-session page.

const oidcSecret = 'web-login-e2e-cookie-secret-0123456789-abcdefghijkl';

interface SessionBody {
  authenticated: boolean;
  authEnabled: boolean;
  accessToken?: string;
  user?: { userId: string; roles: string[] };
}

/** The claims of a JWT, unverified (the service has verified it). */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
}

function bearer(token: string | null): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

describeWithBrowser('signing in to the web interface through the identity provider', () => {
  let fake: FakeOllama;
  let idp: LoginIdentityProvider;
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every /trpc request the signed-in page makes. */
  const apiRequests: Request[] = [];
  // Undone in reverse order, and only what beforeAll got to make.
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => page);

  // Filled in as the sign-in goes on.
  let accessToken = '';
  let subject = '';
  let auditorToken = '';
  const message = 'Who am I talking as?';
  const answerChunks = ['You are ', 'signed in ', 'through the ', 'identity provider.'];

  beforeAll(async () => {
    await ensureWebBuilt();
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    // The provider registers <OIDC_BASE_URL>/auth/callback, and the service must know that address
    // before it starts: so the service gets a port chosen (and freed) beforehand, not port 0.
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    idp = await startLoginIdentityProvider({ serviceBaseUrl: baseUrl });
    cleanups.push(() => idp[Symbol.asyncDispose]());
    idp.setRoles('alice', ['User']);
    idp.setRoles('auditor', ['Admin']);
    service = await startTestService('sqlite', {
      PORT: String(port),
      AUTH_ENABLED: 'true',
      OIDC_ISSUER_BASE_URL: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_AUDIENCE: idp.audience,
      OIDC_BASE_URL: baseUrl,
      OIDC_SECRET: oidcSecret,
      OLLAMA_BASE_URL: fake.url,
    });
    cleanups.push(() => service[Symbol.asyncDispose]());
    expect(service.url).toBe(baseUrl);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    context = await newBrowserContext();
    page = await context.newPage();
    page.on('pageerror', (error) => {
      console.error('page error:', error);
    });
    page.on('request', (sent) => {
      if (new URL(sent.url()).pathname.startsWith('/trpc')) apiRequests.push(sent);
    });
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function newBrowserContext(): Promise<BrowserContext> {
    const created = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // The provider's pages import a web font; there is no need to wait for the internet.
    await created.route(/^https?:\/\/fonts\.(googleapis|gstatic)\.com\//, (route) => route.abort());
    return created;
  }

  /** The page's own view of its session, asked the way the page asks it. */
  function sessionIn(target: Page): Promise<SessionBody> {
    return target.evaluate(async () => {
      const response = await fetch('/auth/session', { headers: { accept: 'application/json' } });
      return (await response.json()) as SessionBody;
    });
  }

  /**
   * From the signed-out page through the provider's login and consent pages back to `/`, signed
   * in. `shots` names the screenshots of the provider's pages (none when undefined).
   */
  async function signIn(target: Page, login: string, shots?: string): Promise<void> {
    await target.locator('#chat a:has-text("Log in")').click();
    const loginForm = target.locator('form:has(input[name="prompt"][value="login"])');
    await loginForm.waitFor({ timeout: 15_000 });
    expect(new URL(target.url()).origin).toBe(idp.issuer);
    await loginForm.locator('input[name="login"]').fill(login);
    await loginForm.locator('input[name="password"]').fill('any password');
    if (shots) await target.screenshot({ path: screenshotPath(`${shots}-provider-form`) });
    await loginForm.locator('button[type="submit"]').click();
    const consent = target.locator('form:has(input[name="prompt"][value="consent"])');
    await consent.waitFor({ timeout: 15_000 });
    expect(new URL(target.url()).origin).toBe(idp.issuer);
    if (shots) await target.screenshot({ path: screenshotPath(`${shots}-consent`) });
    await consent.locator('button[type="submit"]').click();
    await target.waitForURL(`${service.url}/`, { timeout: 15_000 });
    await target.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
  }

  async function api(token: string | null, method: string, path: string, json?: unknown): Promise<TestResponse> {
    return request(service.url, method, path, { headers: bearer(token), ...(json === undefined ? {} : { json }) });
  }

  async function authActionsOf(userId: string): Promise<string[]> {
    const log = await api(auditorToken, 'GET', '/api/audit/log?type=auth&limit=1000');
    expect(log.status, log.text).toBe(200);
    const entries = (log.body.entries as { userId: string; details: { action?: string } }[]).filter((entry) => entry.userId === userId);
    // Newest first: reversed into the order they happened.
    return entries.map((entry) => String(entry.details.action)).reverse();
  }

  it('without a session the page offers Log in and no chat', async () => {
    await page.goto(service.url);
    const login = page.locator('#chat a:has-text("Log in")');
    await login.waitFor();
    expect(await login.getAttribute('href')).toBe('/auth/login');
    expect(await page.locator('#account a:has-text("Log in")').getAttribute('href')).toBe('/auth/login');
    expect(await page.isVisible('#composer-input')).toBe(false);
    expect(await page.isVisible('#sidebar')).toBe(false);
    expect(await page.locator('#account a:has-text("Log out")').count()).toBe(0);
    expect(await sessionIn(page)).toEqual({ success: true, authenticated: false, authEnabled: true });
    // A signed-out page asks the API nothing.
    expect(apiRequests).toEqual([]);
    await page.screenshot({ path: screenshotPath('login-required') });
  });

  it("signs in through the provider's login and consent pages and lands back on / signed in", async () => {
    await signIn(page, 'alice', 'login');
    const session = await sessionIn(page);
    accessToken = session.accessToken ?? '';
    expect(session).toMatchObject({ authenticated: true, authEnabled: true, user: { userId: 'alice', roles: ['User'] } });
    expect(accessToken.split('.')).toHaveLength(3);
    subject = String(claimsOf(accessToken).sub);
    expect(subject).toBe('alice');
    expect(session.user?.userId).toBe(subject);

    expect(await page.textContent('#account .account-name')).toBe('alice');
    expect(await page.getAttribute('#account .account-name', 'title')).toBe('Roles: User');
    expect(await page.locator('#account a:has-text("Log out")').getAttribute('href')).toBe('/auth/logout');
    expect(await page.locator('a:has-text("Log in")').count()).toBe(0);
    expect(await page.isVisible('#composer-input')).toBe(true);
    expect(await page.isVisible('#sidebar')).toBe(true);
    // The sign-in cookies are httpOnly: nothing of them is readable by the page's scripts.
    expect(await page.evaluate('document.cookie')).not.toMatch(/assistant-/);
  });

  it("sends a message and streams the answer, the API called with the session's token", async () => {
    fake.enqueue({ kind: 'text', chunks: answerChunks, chunkDelayMs: 400 });
    await page.selectOption('#mode-select', 'chat');
    await page.fill('#composer-input', message);
    await page.press('#composer-input', 'Enter');
    await page.waitForSelector(`article.message.user >> text=${message}`);
    const answer = page.locator('article.message.assistant').last();
    // Part of the answer is on screen while the rest is still coming.
    await expect.poll(() => answer.textContent(), { timeout: 10_000 }).toContain('You are');
    expect(await answer.getAttribute('aria-busy')).toBe('true');
    await page.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
    expect((await answer.locator('.answer-body').textContent())?.trim()).toBe(answerChunks.join(''));
    expect(await page.textContent('#chat')).not.toContain('Not sent');
    await page.screenshot({ path: screenshotPath('login-signed-in') });

    // Every API call carried the session's access token: queries and mutations in the
    // Authorization header, subscriptions (EventSource, no headers) as their connection parameter.
    const subscriptions = apiRequests.filter((sent) => sent.resourceType() === 'eventsource');
    const calls = apiRequests.filter((sent) => sent.resourceType() !== 'eventsource');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.some((sent) => sent.method() === 'POST')).toBe(true);
    for (const sent of calls) expect(sent.headers().authorization, sent.url()).toBe(`Bearer ${accessToken}`);
    // The event feed and the chat stream.
    expect(subscriptions.length).toBeGreaterThanOrEqual(2);
    for (const sent of subscriptions) {
      const params = new URL(sent.url()).searchParams.get('connectionParams');
      expect(params === null ? null : JSON.parse(params), sent.url()).toEqual({ token: accessToken });
    }
    // The scripted answer reached the provider as this message.
    expect(JSON.stringify(fake.chatRequests().at(-1)?.body)).toContain(message);
  });

  it("the conversation belongs to the signed-in user's sub, and exactly one login was audited", async () => {
    const me = await api(accessToken, 'GET', '/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ userId: subject, roles: ['User'], authEnabled: true });

    const list = await api(accessToken, 'GET', '/api/conversations');
    expect(list.status, list.text).toBe(200);
    const chatted = (list.body.conversations as { id: string; messageCount: number }[]).filter((conversation) => conversation.messageCount > 0);
    expect(chatted).toHaveLength(1);
    const conversationId = chatted[0]?.id ?? '';
    const conversation = await api(accessToken, 'GET', `/api/conversation/${conversationId}`);
    expect(conversation.status, conversation.text).toBe(200);
    const messages = (conversation.body.messages as { role: string; content: string }[]).map(({ role, content }) => ({ role, content }));
    expect(messages).toEqual([
      { role: 'user', content: message },
      { role: 'assistant', content: answerChunks.join('') },
    ]);

    // Someone else, signed in through the same provider, does not see it.
    const second = await newBrowserContext();
    try {
      const auditorPage = await second.newPage();
      await auditorPage.goto(service.url);
      await signIn(auditorPage, 'auditor');
      auditorToken = (await sessionIn(auditorPage)).accessToken ?? '';
    } finally {
      await second.close();
    }
    expect(claimsOf(auditorToken).sub).toBe('auditor');
    expectEnvelope(await api(auditorToken, 'GET', `/api/conversation/${conversationId}`), 404, 'NOT_FOUND');
    const auditorList = await api(auditorToken, 'GET', '/api/conversations');
    expect((auditorList.body.conversations as { id: string }[]).map((entry) => entry.id)).not.toContain(conversationId);
    expectEnvelope(await api(null, 'GET', '/api/conversations'), 401, 'UNAUTHORIZED');
    // A User may not read the audit log; the Admin may.
    expectEnvelope(await api(accessToken, 'GET', '/api/audit/log?type=auth'), 403, 'FORBIDDEN');

    // One login for alice, written at the callback; the page's many calls with the token added none.
    expect(await authActionsOf(subject)).toEqual(['login']);
    expect(await authActionsOf('auditor')).toEqual(['login']);
  }, 60_000);

  it("logs out through the provider's end-session page back to a signed-out /", async () => {
    await page.locator('#account a:has-text("Log out")').click();
    const confirm = page.locator('button[name="logout"][value="yes"]');
    await confirm.waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).origin).toBe(idp.issuer);
    await page.screenshot({ path: screenshotPath('login-logout-confirm') });
    await confirm.click();
    await page.waitForURL(`${service.url}/`, { timeout: 15_000 });

    const login = page.locator('#chat a:has-text("Log in")');
    await login.waitFor();
    expect(await page.locator('#account a:has-text("Log out")').count()).toBe(0);
    expect(await page.isVisible('#composer-input')).toBe(false);
    expect(await sessionIn(page)).toEqual({ success: true, authenticated: false, authEnabled: true });
    await page.screenshot({ path: screenshotPath('login-signed-out') });
    expect(await authActionsOf(subject)).toEqual(['login', 'logout']);

    // The provider's session ended too: Log in asks for credentials again instead of signing straight back in.
    await login.click();
    await page.locator('form:has(input[name="prompt"][value="login"])').waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).origin).toBe(idp.issuer);
  });
});
