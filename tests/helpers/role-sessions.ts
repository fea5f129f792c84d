import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Role } from '../../src/core/auth/permissions.js';
import { startAuthService } from './auth-service.js';
import { freePort, startLoginIdentityProvider, type LoginIdentityProvider } from './login-identity-provider.js';
import type { TestService } from './test-service.js';

// What the browser suites that sign each of the five roles in share (web-usage-roles,
// web-controls-roles): the service behind a login identity provider that hands each person one
// role, a browser context per person, the provider's own login and consent pages, and calls made
// from a signed-in page with the token its session hands it.

export interface RolePerson {
  login: string;
  role: Role;
}

/**
 * The identity provider, then the service on SQLite signing in through it (`env` added). The
 * provider registers <OIDC_BASE_URL>/auth/callback before the service starts, so the service's
 * port is chosen beforehand.
 */
export async function startRoleService(
  people: readonly RolePerson[],
  oidcSecret: string,
  env: Record<string, string>,
): Promise<{ idp: LoginIdentityProvider; service: TestService }> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const idp = await startLoginIdentityProvider({ serviceBaseUrl: baseUrl });
  try {
    for (const person of people) idp.setRoles(person.login, [person.role]);
    const service = await startAuthService('sqlite', idp, {
      PORT: String(port),
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_BASE_URL: baseUrl,
      OIDC_SECRET: oidcSecret,
      ...env,
    });
    return { idp, service };
  } catch (error) {
    await idp[Symbol.asyncDispose]();
    throw error;
  }
}

/** A context of its own (separate cookies, so a separate sign-in), its web fonts never fetched. */
export async function newPersonContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  // The provider's pages import a web font; there is no need to wait for the internet.
  await context.route(/^https?:\/\/fonts\.(googleapis|gstatic)\.com\//, (route) => route.abort());
  return context;
}

/**
 * Signs `person` in from the service's page through the provider's login and consent pages, and
 * checks the page is signed in as that person with that role and no other.
 */
export async function signInThroughProvider(page: Page, serviceUrl: string, person: RolePerson): Promise<void> {
  page.on('pageerror', (error) => {
    console.error(`page error (${person.login}):`, error);
  });
  await page.goto(serviceUrl);
  await page.locator('#chat a:has-text("Log in")').click();
  const loginForm = page.locator('form:has(input[name="prompt"][value="login"])');
  await loginForm.waitFor({ timeout: 15_000 });
  await loginForm.locator('input[name="login"]').fill(person.login);
  await loginForm.locator('input[name="password"]').fill('any password');
  await loginForm.locator('button[type="submit"]').click();
  const consent = page.locator('form:has(input[name="prompt"][value="consent"])');
  await consent.waitFor({ timeout: 15_000 });
  await consent.locator('button[type="submit"]').click();
  await page.waitForURL(`${serviceUrl}/`, { timeout: 15_000 });
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20_000 });
  expect(await page.textContent('#account .account-name')).toBe(person.login);
  expect(await page.getAttribute('#account .account-name', 'title')).toBe(`Roles: ${person.role}`);
}

/** A same-origin call from the page with the access token its own session hands it (a JSON body when given). */
export function callFromPage(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  return page.evaluate(
    async ([method, path, body]) => {
      const session = (await (await fetch('/auth/session', { headers: { accept: 'application/json' } })).json()) as { accessToken?: string };
      const headers: Record<string, string> = { authorization: `Bearer ${session.accessToken ?? ''}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, body: await response.json() };
    },
    [method, path, body] as const,
  );
}
