import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { describeWithBrowser, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The web interface of CONTRACT §13 (issue 23 item 5): the usage page with its chart and tables,
// the policy editor with the server's validation issues beside the fields, and a chat refused by
// a quota saying when it resets. One page, in order: the usage seeded by the first test is what
// the others read. Local mode: the caller holds every role (audit:view, user:management).

const counts = new Intl.NumberFormat('en-US');

describeWithBrowser('the web interface for usage and policies', () => {
  let fake: FakeOllama;
  let service: TestService;
  let browser: Browser;
  let page: Page;
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => page);

  beforeAll(async () => {
    await ensureWebBuilt();
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url });
    cleanups.push(() => service[Symbol.asyncDispose]());
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    page = await context.newPage();
    page.on('pageerror', (error) => {
      console.error('page error:', error);
    });
    await page.goto(service.url);
    await page.waitForSelector('body[data-ready="true"]');
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  async function send(message: string) {
    await page.selectOption('#mode-select', 'chat');
    await page.fill('#composer-input', message);
    await page.press('#composer-input', 'Enter');
  }

  async function answerFinished() {
    await page.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
  }

  const usageReport = async (query: string) => {
    const reply = await service.request('GET', `/api/usage?${query}`);
    expect(reply.status).toBe(200);
    return reply.body;
  };

  it('shows the usage seeded by chatting: totals, a bar for today, the model, the users, estimated counts', async () => {
    fake.enqueue({ kind: 'text', chunks: ['One.'], usage: { input: 120, output: 30 } });
    await send('First question');
    await answerFinished();
    fake.enqueue({ kind: 'text', chunks: ['Two.'], usage: { input: 200, output: 50 } });
    await send('Second question');
    await answerFinished();
    // A stream cut short: the provider never sends its counts, so the ledger estimates them.
    fake.enqueue({ kind: 'cut', chunks: ['Thr'], after: 1 });
    await send('Third question');
    await answerFinished();
    expect(await page.locator('article.message.assistant').last().locator('.answer-error').count()).toBe(1);

    const mine = await usageReport('groupBy=day');
    expect(mine.totals.requests).toBe(3);
    expect(mine.totals.estimated).toBe(1);
    expect(mine.totals.inputTokens).toBeGreaterThan(320);

    expect(await page.isVisible('#policies-open')).toBe(true);
    await page.click('#usage-open');
    await page.locator('#usage-dialog').waitFor({ state: 'visible' });
    await expect.poll(() => page.textContent('#usage-status'), { timeout: 10_000 }).toContain('UTC days');
    const totals = page.locator('#usage-totals dd');
    expect(await totals.nth(0).textContent()).toContain(counts.format(mine.totals.totalTokens));
    expect(await totals.nth(1).textContent()).toBe('3');
    expect(await totals.nth(3).textContent()).toContain('1 of 3 calls');

    // Today's bar carries today's numbers; the month's other days have none.
    const today = new Date().toISOString().slice(0, 10);
    const bars = page.locator('#usage-chart g.day');
    expect(await bars.count()).toBe(Number(today.slice(8, 10)));
    const todayBar = bars.last();
    expect(await todayBar.getAttribute('class')).toContain('estimated');
    expect(await todayBar.locator('title').textContent()).toContain(`${counts.format(mine.totals.totalTokens)} tokens`);
    expect(Number(await todayBar.locator('rect.bar-output').getAttribute('height'))).toBeGreaterThan(0);

    const modelRows = page.locator('#usage-by-model tbody tr');
    expect(await modelRows.count()).toBe(1);
    expect(await modelRows.first().locator('th').textContent()).toBe('ollama/llama3.2:latest');
    const userRows = page.locator('#usage-by-user tbody tr');
    expect(await userRows.locator('th').allTextContents()).toEqual(['local']);
    expect(await page.textContent('#usage-limits-title')).toBe('Your quotas');
    await page.screenshot({ path: screenshotPath('usage-page') });

    // An auditor picks a user from the list: that user's usage, without the caller's own quotas.
    await userRows.locator('button').click();
    await expect.poll(() => page.textContent('#usage-heading')).toBe('Usage of local');
    expect(await page.inputValue('#usage-user')).toBe('local');
    expect(await page.isVisible('#usage-limits-title')).toBe(false);
    await page.fill('#usage-user', '');
    await page.press('#usage-user', 'Enter');
    await expect.poll(() => page.textContent('#usage-heading')).toBe('Your usage');

    // Another range: a month with no use.
    await page.selectOption('#usage-range', 'custom');
    await page.fill('#usage-from', '2020-01-01');
    await page.fill('#usage-to', '2020-01-31');
    await page.click('.usage-custom button[type="submit"]');
    await expect.poll(() => page.textContent('#usage-status')).toContain('Jan 31');
    expect(await page.textContent('#usage-by-model')).toBe('No model was used in this period.');
    expect(await page.locator('#usage-chart g.day').count()).toBe(31);

    await page.keyboard.press('Escape');
    await page.locator('#usage-dialog').waitFor({ state: 'hidden' });
    // The dialog's close event, which hands the focus back, comes a task after it is hidden.
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('usage-open');
  });

  it('saves a policy: the server issues show beside their fields, nothing is stored until it is valid', async () => {
    await page.click('#policies-open');
    await page.locator('#policy-dialog').waitFor({ state: 'visible' });
    await expect.poll(() => page.textContent('#policy-status')).toContain('No policy saved yet');

    // Two mistakes only the server sees: a pattern without its provider, and a quota without a limit.
    await page.click('#policy-add-model-rule');
    await page.locator('#policy-model-access [data-field="allow"]').fill('ollama/*, gpt-4o');
    await page.click('#policy-add-quota');
    await page.click('#policy-save');
    await expect.poll(() => page.textContent('#policy-errors')).toContain('Not saved: the server found 2 problems');
    const allow = page.locator('#policy-model-access [data-field="allow"]');
    expect(await allow.getAttribute('aria-invalid')).toBe('true');
    const allowError = page.locator(`#${(await allow.getAttribute('aria-describedby')) ?? 'missing'}`);
    expect(await allowError.textContent()).toContain('“gpt-4o”: a pattern is provider/model');
    expect(await page.textContent('#policy-quotas .policy-row-error')).toContain('a quota needs tokens, costUsd or requests');
    // The focus went to the first problem.
    expect(await page.evaluate('document.activeElement?.closest(".policy-row")?.querySelector("legend")?.textContent')).toBe('Quota 1');
    expect((await service.request('GET', '/api/policies')).body.updatedAt).toBeNull();
    await page.screenshot({ path: screenshotPath('policy-editor-errors') });

    // Fixed: the model rule goes, the quota holds this user to 10 tokens a day.
    await page.click('#policy-model-access .policy-remove');
    await page.selectOption('#policy-quotas [data-field="kind"]', 'user');
    await page.fill('#policy-quotas [data-field="userId"]', 'local');
    await page.fill('#policy-quotas [data-field="tokens"]', '10');
    await page.click('#policy-save');
    await expect.poll(() => page.textContent('#policy-status')).toContain('Saved');
    expect(await page.textContent('#policy-errors')).toBe('');
    expect(await page.locator('[aria-invalid="true"]').count()).toBe(0);
    const stored = await service.request('GET', '/api/policies');
    expect(stored.body.policy).toEqual({ quotas: [{ subject: { userId: 'local' }, window: 'day', tokens: 10 }], modelAccess: [] });
    await page.keyboard.press('Escape');
    await page.locator('#policy-dialog').waitFor({ state: 'hidden' });
  });

  it('a chat over the quota is refused: the quota and its reset time shown, no Retry, nothing sent', async () => {
    // Saving refreshed the budget: the day's 10 tokens are long used.
    await expect.poll(() => page.textContent('#budget-indicator')).toBe('Daily token limit reached · resets 00:00 UTC');
    const chatRequests = fake.chatRequests().length;
    await send('One more, please');
    const notice = page.locator('#quota-notice');
    await notice.waitFor({ state: 'visible', timeout: 10_000 });
    const text = (await notice.textContent()) ?? '';
    expect(text).toContain('Your daily token limit is reached');
    expect(text).toContain('of 10 tokens used today');
    expect(text).toContain('It resets at 00:00 UTC');
    expect(await notice.locator('time').getAttribute('datetime')).toBe(`${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}T00:00:00.000Z`);
    expect(await page.textContent('#composer-status')).toBe('Not sent: your daily token limit is reached until 00:00 UTC.');
    expect(await page.isVisible('#retry-button')).toBe(false);
    // The message is back in the box, off the screen's conversation, and the model was never asked.
    expect(await page.inputValue('#composer-input')).toBe('One more, please');
    expect(await page.locator('article.message.user', { hasText: 'One more, please' }).count()).toBe(0);
    expect(fake.chatRequests()).toHaveLength(chatRequests);
    await page.screenshot({ path: screenshotPath('usage-quota-refused') });

    // On a phone the pages open from the drawer and fill the screen.
    await page.setViewportSize({ width: 375, height: 740 });
    await page.click('#drawer-toggle');
    await page.click('#usage-open');
    await page.locator('#usage-dialog').waitFor({ state: 'visible' });
    await expect.poll(() => page.locator('#usage-limits tbody tr').count()).toBe(1);
    const box = await page.locator('#usage-dialog').boundingBox();
    expect(box?.width).toBeLessThanOrEqual(375);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await page.screenshot({ path: screenshotPath('usage-page-phone') });
    await page.click('#usage-dialog-close');
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('drawer-toggle');
  });
});
