import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOllama, type FakeOllama } from '../fakes/index.js';
import { describeWithBrowser, ensureWebBuilt, launchChromium, screenshotOnFailure, screenshotPath } from '../helpers/browser.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import type { LoginIdentityProvider } from '../helpers/login-identity-provider.js';
import { callFromPage as callWithSession, newPersonContext, signInThroughProvider, startRoleService } from '../helpers/role-sessions.js';
import { sandboxAvailable } from '../helpers/sandbox.js';
import type { TestService } from '../helpers/test-service.js';

// The web interface's controls by role (CONTRACT §5), signed in through the identity provider's
// own login pages: each control is offered only to the roles whose permissions let its action
// through, as /api/auth/me reports them, and works for them. Someone without the permission who
// forces a hidden or disabled control (clicks the hidden button, re-enables the option, reveals
// the form) is still refused by the server, and nothing changes.

const oidcSecret = 'web-controls-roles-e2e-cookie-secret-0123456789-abcdef';

interface Person {
  login: string;
  role: 'User' | 'Dev' | 'Admin' | 'Lead' | 'TheDude';
  /**
   * CONTRACT §5: terminal:create/execute/kill, models:download and workspaces:switch are Dev, Lead
   * and TheDude's; registering a workspace also needs one of those roles. Agent mode needs
   * terminal:execute. The same three roles hold all of them, so one flag says it.
   */
  develops: boolean;
}

const people: Person[] = [
  { login: 'dev', role: 'Dev', develops: true },
  { login: 'uma', role: 'User', develops: false },
  { login: 'ada', role: 'Admin', develops: false },
  { login: 'lee', role: 'Lead', develops: true },
  { login: 'dude', role: 'TheDude', develops: true },
];

interface Session {
  page: Page;
  /** Every /trpc call the page made and the status it got: what the page asked for on its own. */
  responses: { procedure: string; status: number }[];
  /** The replies whose bodies are still being read into `responses`. */
  replies: Promise<void>[];
}

interface InPageReply {
  status: number;
  body: { error?: { code?: string }; [field: string]: unknown };
}

describeWithBrowser('the web interface offers each role only the controls it may use', () => {
  let fake: FakeOllama;
  let idp: LoginIdentityProvider;
  let service: TestService;
  let browser: Browser;
  let repository: Folder;
  let spare: Folder;
  let current: Page | undefined;
  const contexts: BrowserContext[] = [];
  const sessions = new Map<string, Session>();
  const cleanups: (() => unknown)[] = [];
  screenshotOnFailure(() => current);

  beforeAll(async () => {
    await ensureWebBuilt();
    // Two models, so choosing one and making it the default is possible for everyone.
    fake = await startFakeOllama({ models: ['llama3.2:latest', 'qwen3:8b'] });
    cleanups.push(() => fake.close());
    repository = makeFolder();
    spare = makeFolder();
    cleanups.push(() => {
      repository[Symbol.dispose]();
      spare[Symbol.dispose]();
    });
    initRepository(repository.path);
    ({ idp, service } = await startRoleService(people, oidcSecret, {
      OLLAMA_BASE_URL: fake.url,
      // On: a User's terminal is refused for the role, not because terminals are off.
      ENABLE_SYSTEM_COMMANDS: 'true',
    }));
    cleanups.push(() => idp[Symbol.asyncDispose]());
    cleanups.push(() => service[Symbol.asyncDispose]());
    browser = await launchChromium();
    cleanups.push(() => browser.close());
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** The procedures a /trpc request called (a batch calls several), none for anything else. */
  function proceduresOf(response: Response): string[] {
    const { pathname } = new URL(response.url());
    return pathname.startsWith('/trpc/') ? pathname.slice('/trpc/'.length).split(',') : [];
  }

  /**
   * Each call a /trpc response answers, with the status the server gave it: a batch whose calls
   * fared differently answers 207, with each call's own status in its (superjson) error. An error
   * without one counts as 500, so no refusal passes for a success.
   */
  async function callsOf(response: Response): Promise<Session['responses']> {
    const procedures = proceduresOf(response);
    const body: unknown = response.headers()['content-type']?.includes('application/json') ? await response.json().catch(() => undefined) : undefined;
    const results = (Array.isArray(body) ? body : [body]) as ({ error?: { json?: { data?: { httpStatus?: number } } } } | undefined)[];
    return procedures.map((procedure, index) => {
      const result = results[index];
      const status = result === undefined ? response.status() : result.error === undefined ? 200 : (result.error.json?.data?.httpStatus ?? 500);
      return { procedure, status };
    });
  }

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
    const responses: Session['responses'] = [];
    const replies: Session['replies'] = [];
    page.on('response', (response: Response) => {
      if (proceduresOf(response).length > 0) replies.push(callsOf(response).then((calls) => void responses.push(...calls)));
    });
    await signInThroughProvider(page, service.url, person);
    const session = { page, responses, replies };
    sessions.set(person.login, session);
    return session;
  }

  /** A same-origin call from the page with its own session's token. */
  function callFromPage(page: Page, method: string, path: string, body?: unknown): Promise<InPageReply> {
    return callWithSession(page, method, path, body) as Promise<InPageReply>;
  }

  /** The status the server gave the next call of `procedure` the page makes. */
  async function nextStatus(page: Page, procedure: string): Promise<number | undefined> {
    const response = await page.waitForResponse((candidate) => proceduresOf(candidate).includes(procedure), { timeout: 15_000 });
    return (await callsOf(response)).find((call) => call.procedure === procedure)?.status;
  }

  const workspaceNames = (page: Page) => page.locator('#workspace-select option').allTextContents();

  it('a Dev registers the workspaces from the page', async () => {
    const dev = people.find((person) => person.role === 'Dev');
    if (!dev) throw new Error('no Dev among the people');
    const { page } = await sessionOf(dev);
    expect(await page.isVisible('#workspace-manage')).toBe(true);
    await page.click('#workspace-manage summary');
    for (const [name, folder] of [
      ['main', repository],
      ['spare', spare],
    ] as const) {
      await page.fill('#workspace-name', name);
      await page.fill('#workspace-path', folder.path);
      await page.click('#workspace-add');
      await expect.poll(() => workspaceNames(page), { timeout: 10_000 }).toContain(name);
    }
    await page.click('#workspace-manage summary');
    // Everyone starts in the first one registered.
    expect(await page.locator('#workspace-select option:checked').textContent()).toBe('main');
  }, 60_000);

  for (const person of people) {
    it(`${person.role}: ${person.develops ? 'terminal, agent mode, downloads and workspaces offered and working' : 'no terminal, agent mode, download or workspace changes; forcing them is refused'}`, async () => {
      const { page, responses, replies } = await sessionOf(person);
      await Promise.all(replies);
      // Nothing the page asked for on its own, signing in and loading, was refused; held commands
      // are asked for only by those who may run commands.
      expect(responses.length).toBeGreaterThan(5);
      expect(responses.filter((response) => response.status === 403)).toEqual([]);
      expect(responses.some((response) => response.procedure === 'security.pending')).toBe(person.develops);

      // What is offered.
      expect(await page.isVisible('#terminal-toggle')).toBe(person.develops);
      expect(await page.locator('#mode-select option[value="agent"]').isDisabled()).toBe(!person.develops);
      expect(await page.locator('#mode-select option[value="assistant"]').isDisabled()).toBe(false);
      expect(await page.isVisible('#model-download')).toBe(person.develops);
      expect(await page.isDisabled('#model-select')).toBe(false);
      expect(await workspaceNames(page)).toEqual(['main', 'spare']);
      expect(await page.locator('#workspace-select option:checked').textContent()).toBe('main');
      expect(await page.isDisabled('#workspace-select')).toBe(!person.develops);
      expect(await page.isVisible('#branch-select')).toBe(true);
      expect(await page.isDisabled('#branch-select')).toBe(!person.develops);
      expect(await page.isVisible('#workspace-manage')).toBe(person.develops);
      await page.screenshot({ path: screenshotPath(`controls-roles-${person.role}`) });

      // Making a model one's own default is everyone's (chat:send and the provider, CONTRACT §12).
      await page.selectOption('#model-select', 'ollama/qwen3:8b');
      const switched = nextStatus(page, 'models.switch');
      await page.click('#model-switch');
      expect(await switched).toBe(200);
      expect((await callFromPage(page, 'GET', '/api/model/current')).body).toMatchObject({ provider: 'ollama', model: 'qwen3:8b' });

      if (person.develops) {
        // Agent mode answers.
        fake.enqueue({ kind: 'text', chunks: [`Agent here, ${person.login}.`] });
        await page.selectOption('#mode-select', 'agent');
        await page.fill('#composer-input', `An agent question from ${person.login}`);
        await page.press('#composer-input', 'Enter');
        await page.waitForSelector('article.message.assistant:last-of-type[aria-busy="false"]', { timeout: 20_000 });
        expect((await page.locator('article.message.assistant').last().locator('.answer-body').textContent())?.trim()).toBe(`Agent here, ${person.login}.`);

        // A download runs to the end.
        const model = `tiny-${person.login}:1b`;
        await page.click('#model-download summary');
        await page.fill('#download-name', model);
        await page.press('#download-name', 'Enter');
        await expect.poll(() => page.locator('#model-select option').allTextContents(), { timeout: 15_000 }).toContain(`ollama/${model}`);
        await page.click('#model-download summary');

        // The workspace is switched (this person's own active one) and back. The option marked
        // `selected` is the active one as the server listed it after the switch.
        for (const name of ['spare', 'main']) {
          await page.selectOption('#workspace-select', { label: name });
          await page.click('#workspace-switch');
          await expect.poll(() => page.locator('#workspace-select option[selected]').textContent(), { timeout: 10_000 }).toBe(name);
          expect(await page.isVisible('#workspace-switch')).toBe(false);
        }

        if (sandboxAvailable) {
          await page.click('#terminal-toggle');
          await expect.poll(() => page.textContent('#terminal-state'), { timeout: 20_000 }).toMatch(/^ready/);
          await page.fill('#terminal-command', `echo ${person.login}-$((6*7))`);
          await page.press('#terminal-command', 'Enter');
          await expect.poll(() => page.locator('#terminal-screen .xterm-rows').textContent(), { timeout: 20_000 }).toContain(`${person.login}-42`);
          await page.click('#terminal-toggle');
          expect(await page.isVisible('#terminal-panel')).toBe(false);
        }
        return;
      }

      // Forced: the hidden Terminal button clicked. The panel asks, and the server refuses.
      const listed = nextStatus(page, 'terminals.list');
      await page.locator('#terminal-toggle').dispatchEvent('click');
      await page.locator('#terminal-panel').waitFor({ state: 'visible' });
      expect(await listed).toBe(403);
      await expect.poll(() => page.textContent('#terminal-state')).not.toMatch(/^(ready|not started)/);
      expect(responses.some((response) => response.procedure === 'terminals.create')).toBe(false);
      await page.locator('#terminal-toggle').dispatchEvent('click');

      // Forced: the disabled Agent option chosen. The server refuses before any model is asked.
      const chatsBefore = fake.chatRequests().length;
      await page.locator('#mode-select option[value="agent"]').evaluate((option) => {
        option.removeAttribute('disabled');
      });
      await page.selectOption('#mode-select', 'agent');
      const streamed = nextStatus(page, 'chat.stream');
      await page.fill('#composer-input', `A forced agent question from ${person.login}`);
      await page.press('#composer-input', 'Enter');
      expect(await streamed).toBe(403);
      await expect.poll(() => page.textContent('#composer-status')).toMatch(/^Not sent: /);
      expect(fake.chatRequests()).toHaveLength(chatsBefore);

      // Forced: the hidden download form revealed and sent.
      await page.locator('#model-download').evaluate((details) => {
        details.removeAttribute('hidden');
        details.setAttribute('open', '');
      });
      const downloaded = nextStatus(page, 'models.download');
      await page.fill('#download-name', `forced-${person.login}:1b`);
      await page.press('#download-name', 'Enter');
      expect(await downloaded).toBe(403);
      await expect.poll(() => page.textContent('#model-status')).toMatch(/^Could not download: /);

      // Forced: the disabled workspace list re-enabled and the other one switched to.
      await page.locator('#workspace-select').evaluate((select) => {
        select.removeAttribute('disabled');
      });
      await page.selectOption('#workspace-select', { label: 'spare' });
      await page.locator('#workspace-switch').dispatchEvent('click');
      await expect.poll(() => page.textContent('#workspace-status')).toBe('Your role cannot switch workspaces.');

      // Forced: the hidden Manage form revealed and a workspace added.
      await page.locator('#workspace-manage').evaluate((details) => {
        details.removeAttribute('hidden');
        details.setAttribute('open', '');
      });
      await page.fill('#workspace-name', `forced-${person.login}`);
      await page.fill('#workspace-path', spare.path);
      await page.click('#workspace-add');
      await expect.poll(() => page.textContent('#workspace-form-status')).toBe('Your role cannot add workspaces.');

      // The server agrees with the page, asked directly with the page's own token; nothing changed.
      for (const [method, path, body] of [
        ['GET', '/api/terminals', undefined],
        ['POST', '/api/terminals', {}],
        ['GET', '/api/security/pending', undefined],
        ['POST', '/api/security/confirm', { commandId: 'cmd_anything', confirmed: true }],
        ['POST', '/api/model/download', { modelName: `forced-${person.login}:1b` }],
        ['POST', '/api/workspaces/add', { name: `forced-${person.login}`, path: spare.path }],
      ] as const) {
        const reply = await callFromPage(page, method, path, body);
        expect(reply.status, `${method} ${path}`).toBe(403);
        expect(reply.body.error?.code, `${method} ${path}`).toBe('FORBIDDEN');
      }
      const { workspaces } = (await callFromPage(page, 'GET', '/api/workspaces')).body as { workspaces: { name: string; active: boolean }[] };
      expect(workspaces.map((workspace) => workspace.name)).toEqual(['main', 'spare']);
      expect(workspaces.find((workspace) => workspace.active)?.name).toBe('main');
      expect([...fake.installed].filter((name) => name.startsWith('forced-'))).toEqual([]);
    }, 90_000);
  }
});
