import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §11 "Shell state", against a real terminal: the first line of each attack leaves
// something in the shell and is allowed (medium); the second line, low on its own, is judged
// through what the first left and held. Nothing the attack aims at happens.

describeOnDatabasesWithSandbox('two-step attacks through the shell state', (kind) => {
  let svc: TestService;
  let workspace: Folder;

  beforeAll(async () => {
    workspace = makeFolder();
    svc = await startTestService(kind, { ENABLE_SYSTEM_COMMANDS: 'true' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'state', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });
  beforeEach(() => {
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
  });
  afterEach(() => {
    const { terminals } = svc.service.deps;
    for (const terminal of terminals.listFor('local')) terminals.remove(terminal);
  });

  const open = async (environment?: Record<string, string>) =>
    (await svc.request('POST', '/api/terminals', { json: environment === undefined ? {} : { environment } })).body.terminalId as string;
  const execute = (id: string, command: string) => svc.request('POST', `/api/terminals/${id}/execute`, { json: { command } });
  const ran = async (id: string, command: string) => {
    const response = await execute(id, command);
    expect({ status: response.status, risk: response.body.risk }).toEqual({ status: 200, risk: 'medium' });
    expect(response.body.exitCode).toEqual(expect.any(Number));
  };
  const held = async (id: string, command: string, reason: RegExp) => {
    const response = await execute(id, command);
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: 'pending_confirmation', risk: 'high', reasons: expect.arrayContaining([expect.stringMatching(reason)]) });
  };

  it.each([
    ['BASH_CMDS[ls]=/usr/bin/rm', 'ls -r build', /recursive delete: build/],
    ['BASH_ALIASES[ll]="ls; rm -r build"', 'll', /recursive delete: build/],
    ["x='a[$(rm -r build)]'", ': $((x))', /arithmetic evaluates the value of x as code/],
    ["x='a[$(rm -r build)]'", '[[ x -eq 0 ]]', /arithmetic evaluates the value of x as code/],
    ["export GIT_PAGER='rm -r build; cat'", 'git log -1', /recursive delete: build/],
    ['set -k', 'git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x', /GIT_CONFIG_COUNT/],
    ['f() { rm -r build 2>/dev/null; true; } 2>/dev/null || true', 'f', /recursive delete: build/],
  ])('%s, then %s: the second line is held', async (first, second, reason) => {
    const id = await open();
    // Some first steps are high on their own (a function that deletes); those are confirmed here,
    // as a user would, to reach the second step.
    const response = await execute(id, first);
    if (response.status === 202) {
      expect((await svc.request('POST', '/api/security/confirm', { json: { commandId: response.body.commandId, confirmed: true } })).status).toBe(200);
    } else {
      expect({ status: response.status, risk: response.body.risk }).toEqual({ status: 200, risk: 'medium' });
    }
    await held(id, second, reason);
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it('judges a pager given in the terminal environment at creation', async () => {
    const id = await open({ GIT_PAGER: 'rm -r build; cat' });
    await held(id, 'git log -1', /recursive delete: build/);
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });

  it('holds every later line once a line it cannot follow was confirmed, and not in another terminal', async () => {
    writeFileSync(join(workspace.path, 'env.sh'), 'alias ls="rm -r build"\n');
    const id = await open();
    const response = await execute(id, 'source ./env.sh');
    expect(response.status).toBe(202);
    expect((await svc.request('POST', '/api/security/confirm', { json: { commandId: response.body.commandId, confirmed: true } })).status).toBe(200);
    await held(id, 'ls', /every line is high until the terminal is replaced/);
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    const other = await open();
    const listed = await execute(other, 'ls');
    expect({ status: listed.status, risk: listed.body.risk }).toEqual({ status: 200, risk: 'low' });
  });

  it('keeps what a line that did not finish may have done', async () => {
    const id = await open();
    await ran(id, "export GIT_PAGER='rm -r build; cat'");
    // The unset never runs: `false` ends the && list.
    await ran(id, 'false && unset GIT_PAGER');
    await held(id, 'git log -1', /recursive delete: build/);
    // An unset that ran to its end clears it.
    await ran(id, 'unset GIT_PAGER');
    const response = await execute(id, 'git log -1');
    expect({ status: response.status, risk: response.body.risk }).toEqual({ status: 200, risk: 'low' });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
  });
});
