import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { describeWithBrowser, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import type { LoginIdentityProvider } from '../helpers/login-identity-provider.js';
import { callFromPage as callWithSession, newPersonContext, signInThroughProvider, startRoleService } from '../helpers/role-sessions.js';
import type { TestService } from '../helpers/test-service.js';

// The web interface's usage pages by role (CONTRACT §13, issue 23 item 5), signed in through the
// identity provider's own login pages: everyone sees their own totals; the by-user table and the
// user chooser only with audit:view; the policy editor only with user:management. Someone without
// the permission who forces the hidden parts (reveals the chooser, clicks the hidden button, asks
// the API from the page) still sees nobody else's usage and no policy.

const oidcSecret = 'web-usage-roles-e2e-cookie-secret-0123456789-abcdef';

interface Person {
  login: string;
  role: 'User' | 'Dev' | 'Admin' | 'Lead' | 'TheDude';
  /** CONTRACT §5: audit:view is Admin, Lead and TheDude; user:management TheDude alone. */
  canAudit: boolean;
  canManage: boolean;
  /** What the fake provider reports for this person's one chat; none: they never chat. */
  usage?: { input: number; output: number };
}

const people: Person[] = [
  { login: 'uma', role: 'User', canAudit: false, canManage: false, usage: { input: 100, output: 20 } },
  { login: 'dev', role: 'Dev', canAudit: false, canManage: false, usage: { input: 300, output: 60 } },
  { login: 'ada', role: 'Admin', canAudit: true, canManage: false },
  { login: 'lee', role: 'Lead', canAudit: true, canManage: false },
  { login: 'dude', role: 'TheDude', canAudit: true, canManage: true },
];
const chatters = people.filter((person) => person.usage !== undefined);

interface Session {
  page: Page;
  /** Every /trpc request the page made, URL-decoded. */
  apiCalls: string[];
}

/** What the page gets back from a same-origin call with its own session's token. */
interface InPageReply {
  status: number;
  body: { rows?: { key: string; totalTokens: number }[]; error?: { code?: string } };
}

describeWithBrowser('the usage pages show each role only what it may see', () => {
  let fake: FakeOllama;
  let idp: LoginIdentityProvider;
  let service: TestService;
  let browser: Browser;
  let current: Page | undefined;
  const contexts: BrowserContext[] = [];
  const sessions = new Map<string, Session>();
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => current);

  beforeAll(async () => {
    await ensureWebBuilt();
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    ({ idp, service } = await startRoleService(people, oidcSecret, { OLLAMA_BASE_URL: fake.url }));
    cleanups.push(() => idp[Symbol.asyncDispose]());
    cleanups.push(() => service[Symbol.asyncDispose]());
    browser = await launchChromium();
    cleanups.push(() => browser.close());
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** `person`'s page, signed in through the provider's login and consent pages on first use. */
  async function sessionOf(person: Person): Promise<Session> {
    const known = sessions.get(person.login);
    if (known) {
      current = known.page;
      return known;
    }
    const context = await newPersonContext(browser);
    contexts.push(context);
    const page = await context.newPage();
    current = page;
    const apiCalls: string[] = [];
    page.on('request', (sent: Request) => {
      const url = new URL(sent.url());
      if (url.pathname.startsWith('/trpc')) apiCalls.push(decodeURIComponent(url.pathname + url.search));
    });
    await signInThroughProvider(page, service.url, person);
    const session = { page, apiCalls };
    sessions.set(person.login, session);
    return session;
  }

  /** A same-origin call from the page with its own session's token; a policy document for a PUT. */
  function callFromPage(page: Page, method: string, path: string): Promise<InPageReply> {
    return callWithSession(page, method, path, method === 'GET' ? undefined : { quotas: [], modelAccess: [] }) as Promise<InPageReply>;
  }

  function tokensText(usage: { input: number; output: number } | undefined): string {
    const { input, output } = usage ?? { input: 0, output: 0 };
    return `${String(input + output)} (${String(input)} in, ${String(output)} out)`;
  }

  /** Opens the Usage page and waits for its first load. */
  async function openUsage(page: Page): Promise<void> {
    await page.click('#usage-open');
    await page.locator('#usage-dialog').waitFor({ state: 'visible' });
    await expect.poll(() => page.textContent('#usage-status'), { timeout: 10_000 }).toContain('UTC days');
  }

  it('two people chat through the web interface: the fake reports their tokens', async () => {
    for (const person of chatters) {
      const { page } = await sessionOf(person);
      const usage = person.usage ?? { input: 0, output: 0 };
      fake.enqueue({ kind: 'text', chunks: [`Hello ${person.login}.`], usage });
      await page.selectOption('#mode-select', 'chat');
      await page.fill('#composer-input', `A question from ${person.login}`);
      await page.press('#composer-input', 'Enter');
      await page.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
      expect((await page.locator('article.message.assistant').last().locator('.answer-body').textContent())?.trim()).toBe(`Hello ${person.login}.`);
    }
    expect(fake.chatRequests()).toHaveLength(chatters.length);
  }, 60_000);

  for (const person of people) {
    const what = `${person.canAudit ? 'with' : 'without'} audit:view, ${person.canManage ? 'with' : 'without'} user:management`;
    it(`${person.role} (${what}): own totals; the by-user table, user chooser and policy editor as the role allows`, async () => {
      const { page, apiCalls } = await sessionOf(person);
      expect(await page.isVisible('#usage-open')).toBe(true);
      expect(await page.isVisible('#policies-open')).toBe(person.canManage);

      await openUsage(page);
      expect(await page.textContent('#usage-heading')).toBe('Your usage');
      // The person's own tokens: not everyone's (480), and nothing for those who never chatted.
      const totals = page.locator('#usage-totals dd');
      expect(await totals.nth(0).textContent()).toBe(tokensText(person.usage));
      expect(await totals.nth(1).textContent()).toBe(person.usage ? '1' : '0');
      expect(await page.textContent('#usage-limits-title')).toBe('Your quotas');
      expect(await page.isVisible('#usage-user')).toBe(person.canAudit);
      expect(await page.isVisible('#usage-users-title')).toBe(person.canAudit);
      await page.screenshot({ path: screenshotPath(`usage-roles-${person.role}`) });

      if (person.canAudit) {
        // Both chatters, each with their own tokens; the chooser offers them.
        const rows = page.locator('#usage-by-user tbody tr');
        const listed = await rows.evaluateAll((found) => found.map((row) => [row.querySelector('th')?.textContent, row.querySelectorAll('td')[3]?.textContent]));
        expect(listed.sort()).toEqual(chatters.map((chatter) => [chatter.login, String((chatter.usage?.input ?? 0) + (chatter.usage?.output ?? 0))]).sort());
        expect(await page.locator('#usage-user-ids option').evaluateAll((options) => options.map((option) => option.getAttribute('value') ?? '').sort())).toEqual(
          chatters.map((chatter) => chatter.login).sort(),
        );
        // Picking one shows that person's usage, without the auditor's own quotas.
        const [first] = chatters;
        await page.click(`#usage-by-user button[aria-label="Show the usage of ${first?.login ?? ''}"]`);
        await expect.poll(() => page.textContent('#usage-heading')).toBe(`Usage of ${first?.login ?? ''}`);
        expect(await totals.nth(0).textContent()).toBe(tokensText(first?.usage));
        expect(await page.isVisible('#usage-limits-title')).toBe(false);
        await page.fill('#usage-user', '');
        await page.press('#usage-user', 'Enter');
        await expect.poll(() => page.textContent('#usage-heading')).toBe('Your usage');
        expect(await totals.nth(0).textContent()).toBe(tokensText(person.usage));
      } else {
        // Nothing of anyone else reached the page: no table, no names to choose from.
        expect(await page.locator('#usage-by-user').count()).toBe(0);
        expect(await page.locator('#usage-user-ids option').count()).toBe(0);
        // Forced: the hidden chooser revealed and another person's id entered. The page still asks for
        // and shows the caller's own usage.
        const other = chatters.find((chatter) => chatter.login !== person.login);
        await page.locator('.usage-user').evaluate((chooser) => {
          chooser.removeAttribute('hidden');
        });
        const reloaded = page.waitForResponse((response) => response.url().includes('usage.report'));
        await page.fill('#usage-user', other?.login ?? 'someone');
        await page.press('#usage-user', 'Enter');
        await reloaded;
        await expect.poll(() => page.textContent('#usage-status')).toContain('UTC days');
        expect(await page.textContent('#usage-heading')).toBe('Your usage');
        expect(await totals.nth(0).textContent()).toBe(tokensText(person.usage));
        expect(await page.isVisible('#usage-users-title')).toBe(false);
        // The page never asked the server for anyone else's usage.
        const usageCalls = apiCalls.filter((call) => call.includes('usage.report'));
        // The calls' inputs are readable here: the day report the page does ask for is found in them.
        expect(usageCalls.some((call) => call.includes('"groupBy":"day"'))).toBe(true);
        for (const call of usageCalls) {
          expect(call).not.toContain('"groupBy":"user"');
          expect(call).not.toContain('"userId"');
        }
      }
      await page.keyboard.press('Escape');
      await page.locator('#usage-dialog').waitFor({ state: 'hidden' });

      // The API, asked from the page with the page's own token, agrees with what the page shows.
      const everyone = await callFromPage(page, 'GET', '/api/usage?groupBy=user');
      const someoneElse = await callFromPage(page, 'GET', `/api/usage?userId=${chatters.find((chatter) => chatter.login !== person.login)?.login ?? ''}`);
      if (person.canAudit) {
        expect(everyone.status).toBe(200);
        expect(everyone.body.rows?.map((row) => row.key).sort()).toEqual(chatters.map((chatter) => chatter.login).sort());
        expect(someoneElse.status).toBe(200);
      } else {
        for (const refused of [everyone, someoneElse]) {
          expect(refused.status).toBe(403);
          expect(refused.body.error?.code).toBe('FORBIDDEN');
        }
      }
      for (const [method, path] of [
        ['GET', '/api/policies'],
        ['PUT', '/api/policies'],
      ] as const) {
        const reply = await callFromPage(page, method, path);
        expect(reply.status, `${method} ${path}`).toBe(person.canManage ? 200 : 403);
        if (!person.canManage) expect(reply.body.error?.code).toBe('FORBIDDEN');
      }

      // The policy editor: opened from its button by TheDude; anyone else who clicks the hidden
      // button gets the dialog's frame and the server's refusal, no document.
      const policiesLoaded = page.waitForResponse((response) => response.url().includes('usage.policies'));
      if (person.canManage) await page.click('#policies-open');
      else await page.locator('#policies-open').dispatchEvent('click');
      await page.locator('#policy-dialog').waitFor({ state: 'visible' });
      const policyResponse = await policiesLoaded;
      if (person.canManage) {
        expect(policyResponse.status()).toBe(200);
        // TheDude's own PUT above saved an empty document.
        await expect.poll(() => page.textContent('#policy-status')).toContain('Last changed');
        expect(await page.isVisible('#policy-add-quota')).toBe(true);
      } else {
        expect(policyResponse.status()).toBe(403);
        await expect.poll(() => page.textContent('#policy-status')).toContain('Could not load the policy');
        expect(await page.locator('#policy-quotas .policy-row').count()).toBe(0);
        expect(await page.locator('#policy-model-access .policy-row').count()).toBe(0);
      }
      await page.keyboard.press('Escape');
      await page.locator('#policy-dialog').waitFor({ state: 'hidden' });
    }, 40_000);
  }
});
