import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { describeWithBrowser, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// The web interface as a person uses it every day (issue 22): on a phone-sized screen and a
// laptop, Retry after a failure, copy, regenerate, edit and resend, Esc, workspaces, and what
// became of a held command. The built page, the real service, fake Ollama at the network edge.

interface StoredMessage {
  id: string;
  role: string;
  content: string;
  supersededBy?: string;
}

describeWithBrowser('the web interface for daily use', () => {
  let fake: FakeOllama;
  let workspace: Folder;
  let spare: Folder;
  let service: TestService;
  let browser: Browser;
  let phone: Page;
  let laptop: Page;
  let page: Page | undefined;
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => page);

  async function openPage(context: BrowserContext): Promise<Page> {
    const opened = await context.newPage();
    opened.on('pageerror', (error) => {
      console.error('page error:', error);
    });
    await opened.goto(service.url);
    await opened.waitForSelector('body[data-ready="true"]');
    return opened;
  }

  beforeAll(async () => {
    await ensureWebBuilt();
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    workspace = makeFolder();
    spare = makeFolder();
    cleanups.push(() => {
      workspace[Symbol.dispose]();
      spare[Symbol.dispose]();
    });
    initRepository(workspace.path);
    service = await startTestService('sqlite', { OLLAMA_BASE_URL: fake.url, ENABLE_SYSTEM_COMMANDS: sandboxAvailable ? 'true' : 'false' });
    cleanups.push(() => service[Symbol.asyncDispose]());
    expect((await service.request('POST', '/api/workspaces/add', { json: { name: 'daily', path: workspace.path } })).status).toBe(200);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    const permissions = ['clipboard-read', 'clipboard-write'];
    phone = await openPage(await browser.newContext({ viewport: { width: 375, height: 740 }, permissions }));
    laptop = await openPage(await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions }));
  }, 120_000);

  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  // Each test queues the answers it needs; none is left to the next one.
  beforeEach(() => {
    fake.reset();
  });

  const lastAnswer = (on: Page) => on.locator('article.message.assistant').last();

  async function answerFinished(on: Page) {
    await on.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
  }

  const currentId = async () => (await service.request('GET', '/api/conversation/current')).body.conversation.id as string;

  async function newConversation(on: Page): Promise<string> {
    const before = await currentId();
    if (await on.isVisible('#drawer-toggle')) await on.click('#drawer-toggle');
    await on.click('button.new-conversation');
    await on.waitForSelector('#messages .empty-hint');
    // The hint may already have been on screen: the new conversation is there once the server's
    // current one has changed (the page's context.clear has landed).
    await expect.poll(currentId, { timeout: 10_000 }).not.toBe(before);
    return currentId();
  }

  async function send(on: Page, message: string, mode: 'chat' | 'assistant' | 'agent' = 'chat') {
    await on.selectOption('#mode-select', mode);
    await on.fill('#composer-input', message);
    await on.press('#composer-input', 'Enter');
  }

  /** Where an element is on screen; it must be there. */
  async function boxOf(on: Page, selector: string) {
    const box = await on.locator(selector).last().boundingBox();
    if (!box) throw new Error(`${selector} is not on screen`);
    return box;
  }

  /** Every stored message of the conversation, superseded ones included. */
  async function storedMessages(conversationId: string): Promise<StoredMessage[]> {
    const reply = await service.request('GET', `/api/conversation/${conversationId}`);
    expect(reply.status).toBe(200);
    return reply.body.messages as StoredMessage[];
  }

  /** The chat.stream bodies the page sends while `body` runs. */
  async function chatBodies(on: Page, body: () => Promise<void>): Promise<Record<string, unknown>[]> {
    const bodies: Record<string, unknown>[] = [];
    const listener = (request: Request) => {
      if (!request.url().includes('chat.stream') || request.method() !== 'POST') return;
      const posted = request.postDataJSON() as Record<string, { json?: Record<string, unknown> } | Record<string, unknown>>;
      // A batched tRPC call: { "0": input } (with or without a transformer's { json } wrapper).
      for (const value of Object.values(posted)) bodies.push(('json' in value ? value.json : value) as Record<string, unknown>);
    };
    on.on('request', listener);
    try {
      await body();
    } finally {
      on.off('request', listener);
    }
    return bodies;
  }

  describe('at 375×740', () => {
    beforeAll(() => {
      page = phone;
    });

    it('fits the screen: nothing cut off, Send in view, the list in a drawer', async () => {
      for (const width of [375, 360]) {
        await phone.setViewportSize({ width, height: 740 });
        expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
        for (const selector of ['.composer button[type="submit"]', '#composer-input', '#mode-select', '#drawer-toggle', '#terminal-toggle', '#model-select', '#workspace-select']) {
          const box = await boxOf(phone, selector);
          expect(box.x, selector).toBeGreaterThanOrEqual(0);
          expect(box.x + box.width, selector).toBeLessThanOrEqual(width);
          expect(box.y + box.height, selector).toBeLessThanOrEqual(740);
        }
      }
      await phone.setViewportSize({ width: 375, height: 740 });
      expect(await phone.isVisible('#sidebar')).toBe(false);
      expect(await phone.getAttribute('#drawer-toggle', 'aria-expanded')).toBe('false');
      await phone.screenshot({ path: screenshotPath('daily-phone') });
    });

    it('opens the drawer with its button, keeps the focus in it, and closes on Escape', async () => {
      await phone.click('#drawer-toggle');
      await phone.locator('#sidebar').waitFor({ state: 'visible' });
      expect(await phone.getAttribute('#drawer-toggle', 'aria-expanded')).toBe('true');
      // The focus moved into the drawer; the page behind it is inert.
      expect(await phone.evaluate("document.activeElement?.closest('#sidebar') !== null")).toBe(true);
      expect(await phone.evaluate("document.getElementById('chat').inert")).toBe(true);
      await phone.screenshot({ path: screenshotPath('daily-phone-drawer') });
      await phone.keyboard.press('Escape');
      await phone.locator('#sidebar').waitFor({ state: 'hidden' });
      expect(await phone.evaluate('document.activeElement?.id')).toBe('drawer-toggle');
      expect(await phone.evaluate("document.getElementById('chat').inert")).toBe(false);

      // Choosing a conversation closes it too, and the composer has the focus.
      await phone.click('#drawer-toggle');
      await phone.click('button.new-conversation');
      await phone.locator('#sidebar').waitFor({ state: 'hidden' });
      await expect.poll(() => phone.evaluate('document.activeElement?.id')).toBe('composer-input');
      // Its own close button.
      await phone.click('#drawer-toggle');
      await phone.click('button[aria-label="Close conversations"]');
      await phone.locator('#sidebar').waitFor({ state: 'hidden' });
      expect(await phone.getAttribute('#drawer-toggle', 'aria-expanded')).toBe('false');
    });

    it('an answer with its Copy, Regenerate and Edit fits the screen', async () => {
      fake.enqueue({ kind: 'text', chunks: ['Use this:\n\n```bash\nnpm run build && npm start --workspace=service-with-a-long-name\n```\n'] });
      await send(phone, 'How do I start it?');
      await answerFinished(phone);
      expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
      for (const selector of ['button[data-copy="answer"]', 'button[data-copy="code"]', 'button.regenerate', 'button.edit-message', '.composer button[type="submit"]']) {
        const box = await boxOf(phone, selector);
        expect(box.x + box.width, selector).toBeLessThanOrEqual(375);
      }
      await phone.screenshot({ path: screenshotPath('daily-phone-answer') });
    });
  });

  describe('at 1280×800', () => {
    beforeAll(() => {
      page = laptop;
    });

    it('shows the list as a column, with no drawer button', async () => {
      expect(await laptop.isVisible('#sidebar')).toBe(true);
      expect(await laptop.isVisible('#drawer-toggle')).toBe(false);
      expect(await laptop.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    });

    it('Retry after a provider failure asks for an answer to the stored question, which is stored once', async () => {
      const conversationId = await newConversation(laptop);
      fake.enqueue({ kind: 'fail', status: 500 });
      await send(laptop, 'Question asked once');
      await expect.poll(() => laptop.textContent('#composer-status'), { timeout: 10_000 }).toContain('No answer');
      // The server kept the question: the page says so, and does not call it "not sent".
      expect(await laptop.textContent('#composer-status')).not.toContain('Not sent');
      expect(await laptop.inputValue('#composer-input')).toBe('');
      expect(await laptop.locator('article.message.user').allTextContents()).toEqual(['Question asked once']);
      expect((await storedMessages(conversationId)).map((message) => message.content)).toEqual(['Question asked once']);

      fake.enqueue({ kind: 'text', chunks: ['The answer, at last.'] });
      const bodies = await chatBodies(laptop, async () => {
        await laptop.click('#retry-button');
        await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('The answer, at last.');
      });
      await answerFinished(laptop);
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({ regenerate: true, conversation_id: conversationId });
      expect(bodies[0]?.message).toBeUndefined();
      expect(await laptop.isVisible('#retry-button')).toBe(false);
      const stored = await storedMessages(conversationId);
      expect(stored.filter((message) => message.content === 'Question asked once')).toHaveLength(1);
      expect(stored.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(await laptop.locator('article.message.user').allTextContents()).toEqual(['Question asked once']);
    });

    it('Retry after a request that never reached the server sends the message again, once', async () => {
      const conversationId = await newConversation(laptop);
      const toChat = (url: URL) => url.pathname.includes('chat.stream');
      await laptop.route(toChat, (route) => route.abort('connectionrefused'));
      await send(laptop, 'Lost on the way');
      await expect.poll(() => laptop.textContent('#composer-status'), { timeout: 10_000 }).toContain('Not sent');
      // Nothing stored: the text is given back and the question leaves the screen.
      expect(await laptop.inputValue('#composer-input')).toBe('Lost on the way');
      expect(await laptop.locator('article.message.user').count()).toBe(0);
      expect(await storedMessages(conversationId)).toEqual([]);
      await laptop.unroute(toChat);

      fake.enqueue({ kind: 'text', chunks: ['Arrived.'] });
      const bodies = await chatBodies(laptop, async () => {
        await laptop.click('#retry-button');
        await answerFinished(laptop);
      });
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatchObject({ message: 'Lost on the way' });
      expect(bodies[0]?.regenerate).toBeUndefined();
      expect(await laptop.inputValue('#composer-input')).toBe('');
      expect((await storedMessages(conversationId)).map((message) => message.content)).toEqual(['Lost on the way', 'Arrived.']);
    });

    it('copies an answer and a code block to the clipboard, saying so', async () => {
      await newConversation(laptop);
      const markdown = 'Run this:\n\n```bash\nnpm test && git tag v1.2.0\n```\n\nThen **push**.';
      fake.enqueue({ kind: 'text', chunks: [markdown] });
      await send(laptop, 'How do I release?');
      await answerFinished(laptop);
      const codeCopy = lastAnswer(laptop).locator('button[data-copy="code"]');
      await codeCopy.click();
      await expect.poll(() => codeCopy.textContent()).toBe('Copied');
      expect(await laptop.evaluate('navigator.clipboard.readText()')).toBe('npm test && git tag v1.2.0');
      const answerCopy = lastAnswer(laptop).locator('button[data-copy="answer"]');
      await answerCopy.click();
      await expect.poll(() => answerCopy.textContent()).toBe('Copied');
      expect(await laptop.evaluate('navigator.clipboard.readText()')).toBe(markdown);
      // The code block's text is still the code alone.
      expect(await lastAnswer(laptop).locator('pre').textContent()).toBe('npm test && git tag v1.2.0');
      await expect.poll(() => codeCopy.textContent(), { timeout: 5_000 }).toBe('Copy');
    });

    it('regenerates the last answer: the old one stays stored, superseded, and leaves the screen', async () => {
      const conversationId = await newConversation(laptop);
      fake.enqueue({ kind: 'text', chunks: ['First try.'] });
      await send(laptop, 'Tell me a fact');
      await answerFinished(laptop);
      // Only the last answer offers it.
      fake.enqueue({ kind: 'text', chunks: ['Second fact.'] });
      await send(laptop, 'Another one');
      await answerFinished(laptop);
      expect(await laptop.locator('article.message.assistant button.regenerate:visible').count()).toBe(1);

      fake.enqueue({ kind: 'text', chunks: ['A better second fact.'] });
      const bodies = await chatBodies(laptop, async () => {
        await lastAnswer(laptop).locator('button.regenerate').click();
        await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('A better second fact.');
      });
      await answerFinished(laptop);
      expect(bodies).toEqual([expect.objectContaining({ regenerate: true, conversation_id: conversationId })]);
      expect(await laptop.locator('article.message').allTextContents()).toEqual([
        'Tell me a fact',
        expect.stringContaining('First try.'),
        'Another one',
        expect.stringContaining('A better second fact.'),
      ]);
      const stored = await storedMessages(conversationId);
      const replaced = stored.find((message) => message.content === 'Second fact.');
      const replacement = stored.find((message) => message.content === 'A better second fact.');
      expect(replaced?.supersededBy).toBe(replacement?.id);
      expect(stored.filter((message) => message.content === 'Another one')).toHaveLength(1);
      // The model was not shown the answer it replaced.
      const history = (fake.chatRequests().at(-1)?.body as { messages: { content: string }[] }).messages.map((message) => message.content);
      expect(history).toContain('Another one');
      expect(history).not.toContain('Second fact.');
      // After a reload too, the page shows what is in force.
      await laptop.reload();
      await laptop.waitForSelector('body[data-ready="true"]');
      expect(await laptop.locator('article.message.assistant').allTextContents()).toEqual([expect.stringContaining('First try.'), expect.stringContaining('A better second fact.')]);
    });

    it('edits a question and sends it again: it and what followed are replaced', async () => {
      const conversationId = await newConversation(laptop);
      fake.enqueue({ kind: 'text', chunks: ['Paris.'] });
      await send(laptop, 'Capital of Frence?');
      await answerFinished(laptop);
      fake.enqueue({ kind: 'text', chunks: ['About 2 million.'] });
      await send(laptop, 'And its population?');
      await answerFinished(laptop);

      const first = laptop.locator('article.message.user').first();
      await first.locator('button.edit-message').click();
      const editor = first.locator('textarea.edit-input');
      expect(await editor.inputValue()).toBe('Capital of Frence?');
      // Esc in the editor cancels the edit and nothing else.
      await editor.press('Escape');
      await expect.poll(() => first.locator('textarea.edit-input').count()).toBe(0);
      await first.locator('button.edit-message').click();
      await editor.fill('Capital of France?');
      const questionId = (await storedMessages(conversationId)).find((message) => message.content === 'Capital of Frence?')?.id;
      fake.enqueue({ kind: 'text', chunks: ['Paris, still.'] });
      const bodies = await chatBodies(laptop, async () => {
        await editor.press('Enter');
        await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('Paris, still.');
      });
      await answerFinished(laptop);
      expect(bodies).toEqual([expect.objectContaining({ message: 'Capital of France?', replyTo: questionId, conversation_id: conversationId })]);
      expect(await laptop.locator('article.message').allTextContents()).toEqual(['Capital of France?', expect.stringContaining('Paris, still.')]);
      const stored = await storedMessages(conversationId);
      const edited = stored.find((message) => message.content === 'Capital of France?');
      expect(stored.filter((message) => message.supersededBy === undefined).map((message) => message.content)).toEqual([
        'Capital of France?',
        'Paris, still.',
      ]);
      expect(stored.find((message) => message.id === questionId)?.supersededBy).toBe(edited?.id);
      for (const gone of ['Paris.', 'And its population?', 'About 2 million.']) expect(stored.find((message) => message.content === gone)?.supersededBy).toBeTruthy();
      const history = (fake.chatRequests().at(-1)?.body as { messages: { content: string }[] }).messages.map((message) => message.content);
      expect(history).not.toContain('Capital of Frence?');
      expect(history).not.toContain('And its population?');

      // A question sent from the page is editable at once (its id is looked up).
      const again = laptop.locator('article.message.user').last();
      await again.locator('button.edit-message').click();
      await again.locator('textarea.edit-input').fill('Capital of Spain?');
      fake.enqueue({ kind: 'text', chunks: ['Madrid.'] });
      await again.locator('button.edit-send').click();
      await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('Madrid.');
      await answerFinished(laptop);
      expect(await laptop.locator('article.message.user').allTextContents()).toEqual(['Capital of Spain?']);
    });

    it('Esc stops the answer, from the composer or the page', async () => {
      await newConversation(laptop);
      fake.enqueue({ kind: 'text', chunks: Array.from({ length: 60 }, () => 'more '), chunkDelayMs: 150 });
      await send(laptop, 'Talk for a long time');
      await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('more');
      await laptop.focus('#composer-input');
      await laptop.keyboard.press('Escape');
      await answerFinished(laptop);
      expect(await lastAnswer(laptop).locator('.message-footer').textContent()).toBe('Stopped.');
      expect(await laptop.isEnabled('.composer button[type="submit"]')).toBe(true);

      // With the focus nowhere in particular (the page itself) too.
      fake.enqueue({ kind: 'text', chunks: Array.from({ length: 60 }, () => 'again '), chunkDelayMs: 150 });
      await send(laptop, 'Once more, at length');
      await expect.poll(() => lastAnswer(laptop).textContent(), { timeout: 10_000 }).toContain('again');
      await laptop.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()');
      expect(await laptop.evaluate('document.activeElement === document.body')).toBe(true);
      await laptop.keyboard.press('Escape');
      await answerFinished(laptop);
      expect(await lastAnswer(laptop).locator('.message-footer').textContent()).toBe('Stopped.');
    });

    it('shows titles as plain text, and counts messages in words', async () => {
      await service.request('POST', '/api/conversation/save', {
        json: { title: '# Release **plan** for `v2`', conversationData: { messages: [{ role: 'user', content: 'One question' }] } },
      });
      await service.request('POST', '/api/conversation/save', {
        json: { title: 'Two of them', conversationData: { messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] } },
      });
      const list = laptop.locator('#conversation-list');
      const plain = list.locator('li', { hasText: 'Release plan for v2' });
      await plain.waitFor({ timeout: 10_000 });
      expect(await plain.locator('.conversation-meta').textContent()).toMatch(/^1 message ·/);
      expect(await list.locator('li', { hasText: 'Two of them' }).locator('.conversation-meta').textContent()).toMatch(/^2 messages ·/);
      await plain.locator('button.conversation-open').click();
      await expect.poll(() => laptop.textContent('#conversation-title')).toBe('Release plan for v2');
      // A question left without an answer is offered one, not a resend.
      expect(await laptop.textContent('#composer-status')).toContain('no answer yet');
      expect(await laptop.isVisible('#retry-button')).toBe(true);
    });

    it('adds a workspace from the picker, shows why one is refused, and removes it', async () => {
      await laptop.click('#workspace-manage summary');
      await laptop.fill('#workspace-name', 'nowhere');
      await laptop.fill('#workspace-path', '/var/tmp/no-such-folder-for-this-test');
      await laptop.click('#workspace-add');
      // The server's own reason, whole.
      await expect.poll(() => laptop.textContent('#workspace-form-status'), { timeout: 10_000 }).toMatch(/^Not added: .{10,}/);
      expect(await laptop.locator('#workspace-select option').allTextContents()).not.toContain('nowhere');

      await laptop.fill('#workspace-name', 'spare');
      await laptop.fill('#workspace-path', spare.path);
      await laptop.click('#workspace-add');
      await expect.poll(() => laptop.locator('#workspace-select option').allTextContents(), { timeout: 10_000 }).toContain('spare');
      expect(await laptop.textContent('#workspace-form-status')).toContain('Added spare');
      const listed = (await service.request('GET', '/api/workspaces')).body.workspaces as { name: string; path: string }[];
      expect(listed.find((entry) => entry.name === 'spare')?.path).toBe(spare.path);
      await laptop.screenshot({ path: screenshotPath('daily-workspaces') });

      await laptop.selectOption('#workspace-select', { label: 'spare' });
      laptop.once('dialog', (dialog) => void dialog.accept());
      await laptop.click('#workspace-remove');
      await expect.poll(() => laptop.locator('#workspace-select option').allTextContents(), { timeout: 10_000 }).not.toContain('spare');
      expect(await laptop.textContent('#workspace-form-status')).toContain('Removed spare');
      expect(existsSync(spare.path)).toBe(true);
      expect(await laptop.locator('#workspace-select option').allTextContents()).toContain('daily');
      await laptop.click('#workspace-manage summary');
    });

    it.runIf(sandboxAvailable)("shows a held command's outcome in the dialog and the terminal", async () => {
      workspace.file('build/out.txt', 'old build\n');
      await laptop.click('#terminal-toggle');
      await expect.poll(() => laptop.textContent('#terminal-state'), { timeout: 20_000 }).toMatch(/^ready/);
      const dialog = laptop.locator('#confirm-dialog');

      await laptop.fill('#terminal-command', 'rm -rf ./build && echo removed-it');
      await laptop.press('#terminal-command', 'Enter');
      await dialog.waitFor({ state: 'visible', timeout: 20_000 });
      await dialog.locator('#confirm-run').click();
      await expect.poll(() => dialog.locator('#confirm-outcome').textContent(), { timeout: 20_000 }).toBe('Ran, exit code 0');
      expect(await dialog.locator('#confirm-output').textContent()).toContain('removed-it');
      expect(await laptop.evaluate('document.activeElement?.id')).toBe('confirm-close');
      await laptop.screenshot({ path: screenshotPath('daily-held-outcome') });
      await dialog.locator('#confirm-close').click();
      await dialog.waitFor({ state: 'hidden' });
      expect(existsSync(join(workspace.path, 'build'))).toBe(false);
      await expect.poll(() => laptop.locator('#terminal-screen .xterm-rows').textContent(), { timeout: 10_000 }).toContain('[held command ran, exit code 0]');

      workspace.file('keep/me.txt', 'keep\n');
      await laptop.fill('#terminal-command', 'rm -rf ./keep');
      await laptop.press('#terminal-command', 'Enter');
      await dialog.waitFor({ state: 'visible', timeout: 20_000 });
      await dialog.locator('#confirm-reject').click();
      await expect.poll(() => dialog.locator('#confirm-outcome').textContent(), { timeout: 10_000 }).toBe('Rejected');
      // Escape closes the told outcome like Close.
      await laptop.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(() => laptop.locator('#terminal-screen .xterm-rows').textContent(), { timeout: 10_000 }).toContain('[held command rejected]');
      expect(await laptop.textContent('#terminal-state')).toBe('held command rejected');
      expect(existsSync(join(workspace.path, 'keep', 'me.txt'))).toBe(true);
      await laptop.click('button[aria-label="Hide terminal"]');
    });
  });
});
