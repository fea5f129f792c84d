import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { User } from '../../src/core/auth/permissions.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// Terminals through HTTP with real PTYs in the real sandbox (CONTRACT §3, §4): lifecycle, the
// execute replies, shell state, output, timeouts, interrupts, environment rules and ownership.

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;


describeOnDatabasesWithSandbox('terminals', (kind) => {
  let svc: TestService;
  let workspace: Folder;
  let outside: Folder;

  beforeAll(async () => {
    workspace = makeFolder();
    outside = makeFolder();
    mkdirSync(join(workspace.path, 'sub'));
    svc = await startTestService(kind, {
      ENABLE_SYSTEM_COMMANDS: 'true',
      COMMAND_TIMEOUT_MS: '1500',
      MAX_TERMINALS_PER_USER: '3',
    });
    const added = await svc.request('POST', '/api/workspaces/add', { json: { name: 'fixture', path: workspace.path } });
    expect(added.status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
    outside[Symbol.dispose]();
  });
  // A failed test must not leave its terminals counting against the next test's cap.
  afterEach(() => {
    const { terminals } = svc.service.deps;
    for (const user of ['local', 'alice']) for (const terminal of terminals.listFor(user)) terminals.remove(terminal);
  });

  const open = async (body: Record<string, unknown> = {}) => {
    const res = await svc.request('POST', '/api/terminals', { json: body });
    expect(res.status, res.text).toBe(200);
    return res.body.terminalId as string;
  };
  const execute = (id: string, command: string, extra: Record<string, unknown> = {}) =>
    svc.request('POST', `/api/terminals/${id}/execute`, { json: { command, ...extra } });
  const close = (id: string) => svc.request('DELETE', `/api/terminals/${id}`);

  it('starts in the active workspace and is listed', async () => {
    const res = await svc.request('POST', '/api/terminals', { json: {} });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: 'running', workingDirectory: workspace.path, lastExitCode: null });
    expect(res.body.terminalId).toMatch(uuid);
    const id = res.body.terminalId as string;
    const one = await svc.request('GET', `/api/terminals/${id}`);
    expect(one.body).toMatchObject({ terminalId: id, status: 'running', workingDirectory: workspace.path });
    const list = await svc.request('GET', '/api/terminals');
    expect(list.body.terminals.map((t: { terminalId: string }) => t.terminalId)).toContain(id);
    await close(id);
  });

  it("runs commands with the command's own output and exit code, keeping directory and variables", async () => {
    const id = await open();
    expect((await execute(id, 'echo hi')).body).toEqual({ success: true, output: 'hi', exitCode: 0, risk: 'low', reasons: expect.any(Array) });
    expect((await execute(id, 'ls nothing-here')).body).toMatchObject({ success: true, exitCode: 2 });
    expect((await execute(id, 'cd sub && export GREETING=hello')).body).toMatchObject({ exitCode: 0, output: '' });
    expect((await execute(id, 'pwd')).body.output).toBe(join(workspace.path, 'sub'));
    expect((await execute(id, 'echo "$GREETING world"')).body.output).toBe('hello world');
    expect((await svc.request('GET', `/api/terminals/${id}`)).body.workingDirectory).toBe(join(workspace.path, 'sub'));
    // ANSI colours stripped, CR LF normalised, no prompt and no echo of the command.
    const coloured = await execute(id, "printf '\\033[31mred\\033[0m\\r\\nplain\\n'");
    expect(coloured.body.output).toBe('red\nplain');
    // Multi-line input and a line past the terminal's 4095-byte canonical limit both arrive whole.
    expect((await execute(id, 'echo one\necho two')).body.output).toBe('one\ntwo');
    expect((await execute(id, `echo ${'x'.repeat(6000)} | wc -c`)).body.output).toBe('6001');
    await close(id);
  });

  it('keeps the session log with each command preceded by "$ <command>", and checks `lines`', async () => {
    const id = await open();
    await execute(id, 'echo first');
    await execute(id, 'printf "a\\nb\\nc\\n"');
    const log = await svc.request('GET', `/api/terminals/${id}/output?lines=5`);
    expect(log.body.output).toBe('first\n$ printf "a\\nb\\nc\\n"\na\nb\nc');
    expect(Date.parse(log.body.lastUpdate)).not.toBeNaN();
    const all = await svc.request('GET', `/api/terminals/${id}/output`);
    expect(all.body.output).toBe('$ echo first\nfirst\n$ printf "a\\nb\\nc\\n"\na\nb\nc');
    expectEnvelope(await svc.request('GET', `/api/terminals/${id}/output?lines=0`), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('GET', `/api/terminals/${id}/output?lines=10001`), 400, 'INVALID_REQUEST');
    await close(id);
  });

  it('answers busy without waiting, refuses a second command while busy, and records the exit code later', async () => {
    const id = await open();
    expect((await execute(id, 'sleep 0.5; (exit 7)', { waitForCompletion: false })).body).toMatchObject({
      success: true,
      status: 'busy',
    });
    const refused = expectEnvelope(await execute(id, 'echo too soon'), 400, 'INVALID_REQUEST');
    expect(refused.details.reason).toBe('busy');
    expect((await svc.request('GET', `/api/terminals/${id}`)).body.status).toBe('busy');
    const done = await waitFor(async () => {
      const view = (await svc.request('GET', `/api/terminals/${id}`)).body;
      return view.status === 'running' ? view : undefined;
    });
    expect(done.lastExitCode).toBe(7);
    await close(id);
  });

  it('answers timedOut past COMMAND_TIMEOUT_MS and leaves the command running to its end', async () => {
    const id = await open();
    const res = await execute(id, 'echo started; sleep 2.5; echo finished');
    expect(res.body).toMatchObject({ success: true, timedOut: true, status: 'busy', output: 'started' });
    expect(res.body).not.toHaveProperty('exitCode');
    await waitFor(async () => ((await svc.request('GET', `/api/terminals/${id}`)).body.status === 'running' ? true : undefined), 5000);
    expect((await svc.request('GET', `/api/terminals/${id}`)).body.lastExitCode).toBe(0);
    expect((await svc.request('GET', `/api/terminals/${id}/output`)).body.output).toContain('finished');
    await close(id);
  });

  it('interrupts the running command with Ctrl-C', async () => {
    const id = await open();
    await execute(id, 'sleep 30', { waitForCompletion: false });
    expect((await svc.request('POST', `/api/terminals/${id}/interrupt`)).body).toEqual({ success: true });
    const view = await waitFor(async () => {
      const body = (await svc.request('GET', `/api/terminals/${id}`)).body;
      return body.status === 'running' ? body : undefined;
    });
    expect(view.lastExitCode).toBe(130);
    expect((await execute(id, 'echo alive')).body.output).toBe('alive');
    await close(id);
  });

  it('ends with the shell: `exit` leaves the terminal exited with its code until DELETE', async () => {
    const id = await open();
    expect((await execute(id, 'exit 5')).body).toMatchObject({ success: true, exitCode: 5 });
    expect((await svc.request('GET', `/api/terminals/${id}`)).body).toMatchObject({ status: 'exited', lastExitCode: 5 });
    expect(expectEnvelope(await execute(id, 'echo x'), 400, 'INVALID_REQUEST').details.reason).toBe('exited');
    expect((await close(id)).body).toEqual({ success: true, message: 'Terminal ended' });
    expectEnvelope(await svc.request('GET', `/api/terminals/${id}`), 404, 'NOT_FOUND');
  });

  it('DELETE ends the shell and every process it started', async () => {
    const id = await open();
    const marker = `${process.pid}${Date.now() % 100000}`;
    await execute(id, `sleep 1${marker} & sleep 2${marker} &`);
    await execute(id, `sleep 3${marker}`, { waitForCompletion: false });
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', `sleep [123]${marker}`], { encoding: 'utf8' }).trim().split('\n').length;
      } catch {
        return 0;
      }
    };
    expect(running()).toBe(3);
    await close(id);
    await waitFor(() => (running() === 0 ? true : undefined), 3000, 'the shell processes to end');
  });

  it('checks the working directory and the environment', async () => {
    expectEnvelope(await svc.request('POST', '/api/terminals', { json: { workingDirectory: outside.path } }), 403, 'SECURITY_VIOLATION');
    // Outside and missing answers the same as outside and present: existence is not revealed.
    expectEnvelope(await svc.request('POST', '/api/terminals', { json: { workingDirectory: join(outside.path, 'missing') } }), 403, 'SECURITY_VIOLATION');
    expectEnvelope(await svc.request('POST', '/api/terminals', { json: { workingDirectory: 'relative/dir' } }), 400, 'WORKSPACE_ERROR');
    expectEnvelope(await svc.request('POST', '/api/terminals', { json: { workingDirectory: join(workspace.path, 'missing') } }), 400, 'WORKSPACE_ERROR');
    for (const name of ['LD_PRELOAD', 'PATH', 'GIT_CONFIG_COUNT', 'BASH_ENV', 'PROMPT_COMMAND', 'NODE_OPTIONS', '1BAD', 'A-B']) {
      const error = expectEnvelope(await svc.request('POST', '/api/terminals', { json: { environment: { [name]: 'x' } } }), 400, 'INVALID_REQUEST');
      expect(error.details.issues).toEqual([{ path: ['environment', name], message: expect.any(String) }]);
    }
    process.env.ASSISTANT_TEST_SECRET = 'sk-not-for-shells';
    try {
      const id = await open({ workingDirectory: join(workspace.path, 'sub'), environment: { GREETING: 'hello' } });
      expect((await execute(id, 'pwd')).body.output).toBe(join(workspace.path, 'sub'));
      expect((await execute(id, 'echo $GREETING')).body.output).toBe('hello');
      // The shell gets a fresh environment: nothing of the service's own reaches it.
      expect((await execute(id, 'env')).body.output).not.toContain('sk-not-for-shells');
      await close(id);
    } finally {
      delete process.env.ASSISTANT_TEST_SECRET;
    }
  });

  it('survives commands that tamper with the terminal or print look-alikes of its markers', async () => {
    const id = await open();
    expect((await execute(id, "printf 'hello\\033]6973;'")).body).toMatchObject({ exitCode: 0 });
    expect((await execute(id, 'echo after')).body.output).toBe('after');
    expect((await execute(id, 'stty -icrnl')).body).toMatchObject({ exitCode: 0 });
    expect((await execute(id, 'echo still')).body.output).toBe('still');
    expect((await execute(id, 'exec >/dev/null')).body).toMatchObject({ exitCode: 0 });
    expect((await execute(id, 'echo hidden')).body).toMatchObject({ exitCode: 0, output: '' });
    expect((await execute(id, `echo ${'ü'.repeat(1500)} | wc -m`)).body).toMatchObject({ exitCode: 0 });
    const held = await execute(id, 'PROMPT_COMMAND=true');
    expect(held.status).toBe(202);
    await svc.request('POST', '/api/security/confirm', { json: { commandId: held.body.commandId, confirmed: true } });
    expect((await execute(id, 'true')).body).toMatchObject({ exitCode: 0 });
    await close(id);
  });

  it('keeps exited terminals until DELETE, but no more than the cap per user', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      const id = await open();
      await execute(id, 'exit');
      ids.push(id);
    }
    const exited = ((await svc.request('GET', '/api/terminals')).body.terminals as { terminalId: string; status: string }[]).filter(
      (terminal) => terminal.status === 'exited',
    );
    expect(exited.map((terminal) => terminal.terminalId)).toEqual(ids.slice(2));
  });

  it('answers 404 for unknown, malformed and over-long terminal ids', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope', 'x'.repeat(5000)]) {
      expectEnvelope(await svc.request('GET', `/api/terminals/${id}`), 404, 'NOT_FOUND');
      expectEnvelope(await execute(id, 'echo x'), 404, 'NOT_FOUND');
    }
  });

  it('caps live terminals per user with 429 and details.cap', async () => {
    const ids = [await open(), await open(), await open()];
    const error = expectEnvelope(await svc.request('POST', '/api/terminals', { json: {} }), 429, 'RATE_LIMIT_EXCEEDED');
    expect(error.details.cap).toBe(3);
    await execute(ids[0] ?? '', 'exit');
    const freed = await svc.request('POST', '/api/terminals', { json: {} });
    expect(freed.status).toBe(200);
    for (const id of [...ids, freed.body.terminalId as string]) await close(id);
  });

  it("keeps terminals to their owner: another user's are 404 everywhere", async () => {
    const as = (user: User) => callerFor(svc.service.deps, user, '203.0.113.9');
    const alice = as(userWith('alice', ['Dev']));
    const bob = as(userWith('bob', ['Lead']));
    const { terminalId } = await alice.terminals.create({});
    expect(await errorCodeOf(bob.terminals.get({ terminalId }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.terminals.execute({ terminalId, command: 'echo x', waitForCompletion: true }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.terminals.output({ terminalId, lines: 5 }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.terminals.interrupt({ terminalId }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(bob.terminals.delete({ terminalId }))).toBe('NOT_FOUND');
    expect((await bob.terminals.list({})).terminals).toEqual([]);
    expect((await alice.terminals.execute({ terminalId, command: 'echo mine', waitForCompletion: true })).output).toBe('mine');
    const audit = await svc.service.deps.store.db.auditEntry.findFirst({ where: { userId: 'alice', type: 'terminal' } });
    expect(audit).toMatchObject({ ip: '203.0.113.9', details: { action: 'created', terminalId } });
    await alice.terminals.delete({ terminalId });
  });

  it('refuses to delete a workspace while a terminal runs inside it, also in a subdirectory', async () => {
    const id = await open({ workingDirectory: join(workspace.path, 'sub') });
    const { workspaces } = (await svc.request('GET', '/api/workspaces')).body;
    const workspaceId = (workspaces as { id: string }[])[0]?.id ?? '';
    expect(expectEnvelope(await svc.request('DELETE', `/api/workspaces/${workspaceId}`), 400, 'WORKSPACE_ERROR').details.reason).toBe('terminal_running');
    await close(id);
    expect(existsSync(workspace.path)).toBe(true);
    expect((await svc.request('GET', '/api/workspaces')).body.workspaces).toHaveLength(1);
  });
});

describeOnDatabasesWithSandbox('terminals switched off', (kind) => {
  it('answers 403 SECURITY_VIOLATION naming ENABLE_SYSTEM_COMMANDS, before validating input', async () => {
    await using svc = await startTestService(kind);
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, json] of [
      ['POST', '/api/terminals', { environment: 'not an object' }],
      ['GET', '/api/terminals', undefined],
      ['GET', `/api/terminals/${id}`, undefined],
      ['POST', `/api/terminals/${id}/execute`, { command: 'ls' }],
      ['GET', '/api/security/pending', undefined],
      ['POST', '/api/security/confirm', { commandId: id, confirmed: true }],
    ] as const) {
      const error = expectEnvelope(await svc.request(method, path, json === undefined ? {} : { json }), 403, 'SECURITY_VIOLATION');
      expect(error.message).toContain('ENABLE_SYSTEM_COMMANDS=true');
    }
    expect((await svc.request('GET', '/api/status')).body).toMatchObject({ systemCommands: false, sandbox: 'bwrap' });
  });

  it('needs a workspace: none registered and none given is 400 WORKSPACE_ERROR', async () => {
    await using svc = await startTestService(kind, { ENABLE_SYSTEM_COMMANDS: 'true' });
    const error = expectEnvelope(await svc.request('POST', '/api/terminals', { json: {} }), 400, 'WORKSPACE_ERROR');
    expect(error.message).toMatch(/No workspace/);
  });
});
