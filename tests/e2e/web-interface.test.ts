import express from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webInterface } from '../../src/http/web-interface.js';
import { startFakeOllama, type FakeOllama, type Script } from '../fakes/index.js';
import { describeWithBrowser, docsScreenshotPath, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import { expectEnvelope, request, startTestService, type TestService } from '../helpers/test-service.js';

// The web interface end to end: the built page served at / by the real service (fake Ollama at
// the network edge), driven in headless chromium the way a person would use it.

const toolCall = (name: string, args: unknown): Script => ({ kind: 'tools', calls: [{ id: `call_${name}`, name, arguments: args }] });
const answer = (text: string): Script => ({ kind: 'text', chunks: [text] });

describe('serving the web interface', () => {
  beforeAll(async () => {
    await ensureWebBuilt();
  });

  it('serves index.html uncached with a Content-Security-Policy, and hashed assets for a year', async () => {
    await using service = await startTestService('sqlite');
    const index = await service.request('GET', '/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    expect(asset).toBeDefined();
    const script = await service.request('GET', asset ?? '');
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // No client-side routing: other paths are the API's 404.
    expectEnvelope(await service.request('GET', '/conversations/x'), 404, 'NOT_FOUND');
    expectEnvelope(await service.request('GET', '/assets/missing.js'), 404, 'NOT_FOUND');
  });

  it('ENABLE_WEB_INTERFACE=false leaves / to the 404 envelope', async () => {
    await using service = await startTestService('sqlite', { ENABLE_WEB_INTERFACE: 'false' });
    expectEnvelope(await service.request('GET', '/'), 404, 'NOT_FOUND');
  });

  it('a page that was never built answers 503 in the envelope, naming the fix', async () => {
    const app = express().use(webInterface('/nonexistent/web'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const error = expectEnvelope(await request(`http://127.0.0.1:${port}`, 'GET', '/'), 503, 'SERVICE_UNAVAILABLE');
      expect(error.message).toContain('npm run build');
    } finally {
      server.close();
    }
  });
});

describeWithBrowser('the web interface in a browser', () => {
  let fake: FakeOllama;
  let workspace: Folder;
  let service: TestService;
  let browser: Browser;
  let page: Page;
  // Undone in reverse order, and only what beforeAll got to make.
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => page);

  beforeAll(async () => {
    await ensureWebBuilt();
    fake = await startFakeOllama();
    cleanups.push(() => fake.close());
    workspace = makeFolder();
    cleanups.push(() => {
      workspace[Symbol.dispose]();
    });
    initRepository(workspace.path);
    workspace.file('notes.txt', 'hello notes\n');
    service = await startTestService('sqlite', {
      OLLAMA_BASE_URL: fake.url,
      ENABLE_SYSTEM_COMMANDS: sandboxAvailable ? 'true' : 'false',
    });
    cleanups.push(() => service[Symbol.asyncDispose]());
    expect((await service.request('POST', '/api/workspaces/add', { json: { name: 'e2e', path: workspace.path } })).status).toBe(200);
    browser = await launchChromium();
    cleanups.push(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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

  const lastAnswer = () => page.locator('article.message.assistant').last();

  async function send(message: string, mode: 'chat' | 'assistant' | 'agent' = 'assistant') {
    await page.selectOption('#mode-select', mode);
    await page.fill('#composer-input', message);
    await page.press('#composer-input', 'Enter');
  }

  async function answerFinished() {
    await page.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
  }

  /** The conversation whose answer is coming, as the page keeps it for a reload. */
  async function runningStream(): Promise<{ conversationId: string; lastSeq: number } | null> {
    const stored = await page.evaluate<string | null>("sessionStorage.getItem('assistant.running-stream')");
    return stored === null ? null : (JSON.parse(stored) as { conversationId: string; lastSeq: number });
  }

  it('sends a message and shows the answer while it streams, as sanitised, highlighted Markdown', async () => {
    fake.enqueue({
      kind: 'text',
      chunks: ['Hello', ' **world**', ' <img src=x onerror="window.pwned=1">', '\n\n```ts\nconst answer: number = 42;\n```\n'],
      chunkDelayMs: 400,
    });
    await send('Say hello with some code');
    await page.waitForSelector('article.message.user >> text=Say hello with some code');
    // Part of the answer is on screen while the rest is still coming.
    await expect.poll(() => lastAnswer().textContent(), { timeout: 10_000 }).toContain('Hello');
    expect(await lastAnswer().getAttribute('aria-busy')).toBe('true');
    expect(await page.isVisible('button:has-text("Stop")')).toBe(true);
    await answerFinished();
    expect(await lastAnswer().locator('strong').textContent()).toBe('world');
    expect(await lastAnswer().locator('code.hljs.language-ts .hljs-keyword').first().textContent()).toBe('const');
    // The sanitiser's work: the page's CSP would block an inline handler anyway, so checking that
    // it never ran would prove nothing; the attribute must be gone.
    expect(await lastAnswer().locator('img').getAttribute('onerror')).toBeNull();
    expect(await page.isVisible('button:has-text("Stop")')).toBe(false);
    await page.screenshot({ path: screenshotPath('streamed-answer') });
  });

  it('picks a running answer up again after a reload, showing each part once', async () => {
    // Three parts, then the model goes silent with the answer open: the reload is certain to
    // happen mid-answer, however slow the machine.
    const shown = ['part1 ', 'part2 ', 'part3 '];
    fake.enqueue({ kind: 'stallMidStream', chunks: [...shown, 'never sent'], after: shown.length });
    await send('Count slowly');
    await expect.poll(() => lastAnswer().textContent(), { timeout: 10_000 }).toContain('part3');
    expect((await runningStream())?.conversationId).toBeDefined();
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    // Followed again, still running, and nothing shown twice.
    expect(await lastAnswer().getAttribute('aria-busy')).toBe('true');
    await expect.poll(async () => (await lastAnswer().locator('.answer-body').textContent())?.trim(), { timeout: 10_000 }).toBe(shown.join('').trim());
    expect(await page.locator('article.message.user').last().textContent()).toBe('Count slowly');
    expect(await page.locator('article.message.user', { hasText: 'Count slowly' }).count()).toBe(1);
    await page.screenshot({ path: screenshotPath('resumed-after-reload') });
    await page.click('button:has-text("Stop")');
    await answerFinished();
    expect(await lastAnswer().locator('.message-footer').textContent()).toBe('Stopped.');
    expect((await lastAnswer().locator('.answer-body').textContent())?.trim()).toBe(shown.join('').trim());
    expect(await runningStream()).toBeNull();
  });

  it('keeps an answer coming while another conversation is open, and follows it again on return', async () => {
    await page.click('button.new-conversation');
    await page.waitForSelector('#messages .empty-hint');
    fake.enqueue({ kind: 'stallMidStream', chunks: ['Still thinking ', 'never sent'], after: 1 });
    await page.selectOption('#mode-select', 'chat');
    await page.fill('#composer-input', 'Think about it');
    // A second Enter while the first message is starting sends nothing more.
    await page.press('#composer-input', 'Enter');
    await page.press('#composer-input', 'Enter');
    await expect.poll(() => lastAnswer().textContent(), { timeout: 10_000 }).toContain('Still thinking');
    expect(await page.locator('article.message.user').count()).toBe(1);
    const conversationId = (await runningStream())?.conversationId ?? '';
    expect(conversationId).not.toBe('');

    await page.click('button.new-conversation');
    await page.waitForSelector('#messages .empty-hint');
    // Nothing of the other answer lands here, and this conversation can be written to.
    expect(await page.locator('#messages article').count()).toBe(0);
    expect(await page.isEnabled('.composer button[type="submit"]')).toBe(true);
    expect(await runningStream()).toBeNull();

    await page.locator(`#conversation-list li[data-id="${conversationId}"] button.conversation-open`).click();
    await page.waitForSelector('article.message.user >> text=Think about it');
    expect(await lastAnswer().getAttribute('aria-busy')).toBe('true');
    expect((await lastAnswer().locator('.answer-body').textContent())?.trim()).toBe('Still thinking');
    expect(await page.isDisabled('.composer button[type="submit"]')).toBe(true);
    expect((await runningStream())?.conversationId).toBe(conversationId);
    await page.click('button:has-text("Stop")');
    await answerFinished();
    expect(await lastAnswer().locator('.message-footer').textContent()).toBe('Stopped.');
    expect(await page.isEnabled('.composer button[type="submit"]')).toBe(true);
  });

  it('stops a generation with the Stop button', async () => {
    fake.enqueue({ kind: 'text', chunks: Array.from({ length: 40 }, () => 'more '), chunkDelayMs: 200 });
    await send('Talk for a long time', 'chat');
    await expect.poll(() => lastAnswer().textContent(), { timeout: 10_000 }).toContain('more');
    await page.click('button:has-text("Stop")');
    await answerFinished();
    expect(await lastAnswer().locator('.message-footer').textContent()).toBe('Stopped.');
  });

  it('shows a tool call and its result inline', async () => {
    fake.enqueue(toolCall('list_files', { path: '.' }), answer('There is a notes file.'));
    await send('What files are there?', 'assistant');
    await answerFinished();
    const tool = lastAnswer().locator('details.tool-call[data-tool="list_files"]');
    await tool.locator('summary').click();
    expect(await tool.locator('.tool-params').textContent()).toContain('"path"');
    expect(await tool.locator('.tool-result').textContent()).toContain('notes.txt');
    expect(await lastAnswer().textContent()).toContain('There is a notes file.');
    await page.screenshot({ path: screenshotPath('tool-call') });
  });

  it.runIf(sandboxAvailable)('pauses the agent on a held command: confirmed in the dialog, the same answer continues with its output', async () => {
    workspace.file('build/out.txt', 'old build\n');
    const command = 'rm -rf ./build && echo cleaned';
    fake.reset();
    fake.enqueue(toolCall('run_command', { command }), answer('The build is clean now.'));
    await send('Clean the build', 'agent');
    const dialog = page.locator('#confirm-dialog');
    await dialog.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await dialog.locator('#confirm-command').textContent()).toBe(command);
    expect(await dialog.textContent()).toContain('Risk: high');
    // Reject has the focus, so a stray Enter cannot run it.
    expect(await page.evaluate('document.activeElement?.id')).toBe('confirm-reject');
    // The answer is paused, not over: its tool call shows as waiting and the stream is open.
    const tool = lastAnswer().locator('details.tool-call[data-tool="run_command"]');
    await expect.poll(() => tool.locator('.tool-state').textContent(), { timeout: 10_000 }).toBe('(waiting for confirmation)');
    expect(await lastAnswer().getAttribute('aria-busy')).toBe('true');
    await page.screenshot({ path: screenshotPath('confirmation-dialog') });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    await dialog.locator('#confirm-run').click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await service.request('GET', '/api/security/pending')).body.pending).toEqual([]);
    // The command really ran, and the same answer went on with its output.
    await answerFinished();
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
    expect(await tool.locator('.tool-state').textContent()).toBe('(done)');
    await tool.locator('summary').click();
    expect(await tool.locator('.tool-result').textContent()).toContain('cleaned');
    expect(await lastAnswer().textContent()).toContain('The build is clean now.');
    expect(await page.locator('article.message.assistant', { hasText: 'The build is clean now.' }).count()).toBe(1);
    // The model was asked again with the command's real outcome.
    const followUp = fake.chatRequests()[1]?.body as { messages: { role: string; content: string }[] } | undefined;
    expect(followUp?.messages.filter((message) => message.role === 'tool').at(-1)?.content).toContain('cleaned');
  });

  it.runIf(sandboxAvailable)('a held command rejected in the dialog does not run, and the model says so', async () => {
    workspace.file('keep/me.txt', 'keep\n');
    fake.reset();
    fake.enqueue(toolCall('run_command', { command: 'rm -rf ./keep' }), answer('Understood: I did not remove it.'));
    await send('Remove keep', 'agent');
    const dialog = page.locator('#confirm-dialog');
    await dialog.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await dialog.locator('#confirm-command').textContent()).toBe('rm -rf ./keep');
    await dialog.locator('#confirm-reject').click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await service.request('GET', '/api/security/pending')).body.pending).toEqual([]);
    await answerFinished();
    expect(existsSync(join(workspace.path, 'keep', 'me.txt'))).toBe(true);
    const tool = lastAnswer().locator('details.tool-call[data-tool="run_command"]');
    expect(await tool.locator('.tool-state').textContent()).toBe('(rejected)');
    expect(await lastAnswer().textContent()).toContain('Understood: I did not remove it.');
    const followUp = fake.chatRequests()[1]?.body as { messages: { role: string; content: string }[] } | undefined;
    expect(JSON.parse(followUp?.messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '{}')).toMatchObject({ rejected: true });
  });

  it('lists, searches, opens, renames and deletes conversations', async () => {
    for (const [title, content] of [
      ['Release plan', 'Plan the release for Friday'],
      ['Grocery list', 'Milk, eggs and bread'],
    ]) {
      await service.request('POST', '/api/conversation/save', { json: { title, conversationData: { messages: [{ role: 'user', content }] } } });
    }
    const list = page.locator('#conversation-list');
    // The save events reach the page over its event feed; no reload needed.
    await list.locator('text=Grocery list').waitFor({ timeout: 10_000 });

    await list.locator('button.conversation-open', { hasText: 'Release plan' }).click();
    await page.waitForSelector('#conversation-title >> text=Release plan');
    expect(await page.locator('article.message.user').allTextContents()).toEqual(['Plan the release for Friday']);

    await page.fill('#conversation-search', 'eggs');
    await expect.poll(() => list.locator('.conversation-name').allTextContents()).toEqual(['Grocery list']);
    await page.fill('#conversation-search', '');
    await expect.poll(() => list.locator('.conversation').count()).toBeGreaterThan(2);

    await list.locator('button[aria-label="Rename Release plan"]').click();
    await page.fill('.rename-input', 'Release plan, final');
    await page.press('.rename-input', 'Enter');
    await list.locator('text=Release plan, final').waitFor();
    expect(await page.textContent('#conversation-title')).toBe('Release plan, final');
    // The list was redrawn; the focus is back where the rename started.
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe('Rename Release plan, final');

    page.once('dialog', (dialog) => void dialog.accept());
    await list.locator('button[aria-label="Delete Grocery list"]').click();
    await expect.poll(() => list.locator('.conversation-name').allTextContents()).not.toContain('Grocery list');
    // Its buttons are gone: the focus went to the conversation now in its place, not to the page.
    await expect.poll(() => page.evaluate("document.activeElement?.className")).toBe('conversation-open');
    const remaining = (await service.request('GET', '/api/conversations?q=grocery')).body;
    expect(remaining.total).toBe(0);
    await page.screenshot({ path: screenshotPath('conversations') });
  });

  it.runIf(sandboxAvailable)("opens the terminal and shows a command's output", async () => {
    await page.click('#terminal-toggle');
    await expect.poll(() => page.textContent('#terminal-state'), { timeout: 20_000 }).toMatch(/^ready/);
    await page.fill('#terminal-command', 'echo e2e-$((6*7))');
    await page.press('#terminal-command', 'Enter');
    await expect.poll(() => page.locator('#terminal-screen .xterm-rows').textContent(), { timeout: 20_000 }).toContain('e2e-42');
    await expect.poll(() => page.textContent('#terminal-state')).toContain('exit code 0');
    await page.screenshot({ path: screenshotPath('terminal') });
  });

  it('shows the workspace with its branch, and a model download with its progress', async () => {
    expect(await page.locator('#workspace-select option:checked').textContent()).toBe('e2e');
    expect(await page.locator('#branch-select option:checked').textContent()).toContain('main');
    expect(await page.textContent('#workspace-state')).toMatch(/^(clean|dirty)/);

    fake.pullSettings = { ...fake.pullSettings, stepDelayMs: 300, steps: 6 };
    await page.click('summary:has-text("Download")');
    await page.fill('#download-name', 'qwen3:8b');
    await page.press('#download-name', 'Enter');
    // Progress arrives over the event feed while the pull runs.
    await page.locator('#download-progress').waitFor({ state: 'visible', timeout: 10_000 });
    await expect.poll(() => page.getAttribute('#download-progress', 'value').then(Number), { timeout: 10_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.textContent('#model-status'), { timeout: 15_000 }).toContain('qwen3:8b downloaded');
    await expect.poll(() => page.locator('#model-select option').allTextContents()).toContain('ollama/qwen3:8b');

    // Choosing in the list (arrow keys do that too) picks this conversation's model and only offers
    // Make default: nobody's active model changes (CONTRACT §12).
    const switches: string[] = [];
    const onRequest = (sent: Request) => {
      if (sent.url().includes('models.switch')) switches.push(sent.url());
    };
    page.on('request', onRequest);
    const active = await page.inputValue('#model-select');
    expect(await page.isDisabled('#model-switch')).toBe(true);
    await page.selectOption('#model-select', 'ollama/qwen3:8b');
    expect(await page.isEnabled('#model-switch')).toBe(true);
    await page.selectOption('#model-select', active);
    expect(await page.isDisabled('#model-switch')).toBe(true);
    page.off('request', onRequest);
    expect(switches).toEqual([]);
    await page.click('summary:has-text("Download")');
  });

  it("sends the picked model with this conversation's messages; nobody's active model changes", async () => {
    const before = (await service.request('GET', '/api/model/current')).body as { model: string; provider: string };
    expect(before.model).not.toBe('qwen3:8b');
    const shown = await page.inputValue('#model-select');
    expect(shown).toBe(`${before.provider}/${before.model}:latest`);
    await page.selectOption('#model-select', 'ollama/qwen3:8b');
    await send('Which model answers?', 'chat');
    await answerFinished();
    expect(fake.chatRequests().at(-1)?.body.model).toBe('qwen3:8b');
    expect(await page.locator('article.message.assistant').last().textContent()).toContain('ollama/qwen3:8b');
    expect((await service.request('GET', '/api/model/current')).body).toEqual(before);
    // Make default sets the caller's own active model, which the picker then shows as applied.
    await page.click('#model-switch');
    await expect.poll(() => service.request('GET', '/api/model/current').then((reply) => reply.body.model as string)).toBe('qwen3:8b');
    expect(await page.isDisabled('#model-switch')).toBe(true);
    await page.selectOption('#model-select', shown);
    await page.click('#model-switch');
    // The same model as before, under the name the list gives it.
    await expect.poll(() => service.request('GET', '/api/model/current').then((reply) => `${reply.body.provider}/${reply.body.model}`)).toBe(shown);
  });

  it('makes the screenshot of the README', async () => {
    fake.enqueue({
      kind: 'text',
      chunks: [
        'The release checklist:\n\n1. Run the tests\n2. Tag the version\n\n',
        '```bash\nnpm test && git tag v1.2.0\n```\n',
      ],
    });
    await page.locator('#conversation-list button.conversation-open', { hasText: 'Release plan, final' }).click();
    await expect.poll(() => page.textContent('#model-status'), { timeout: 10_000 }).toBe('');
    await send('What are the steps?', 'assistant');
    await answerFinished();
    await page.screenshot({ path: docsScreenshotPath() });
  });
});
