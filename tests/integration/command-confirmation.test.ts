import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { User } from '../../src/core/auth/permissions.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { describeOnDatabasesWithSandbox } from '../helpers/sandbox.js';
import { makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §4's confirmation flow through HTTP: critical refused, high held (202), listed,
// confirmed or rejected exactly once, expiring, capped, and decided only by its issuer or a Lead.


describeOnDatabasesWithSandbox('command confirmation', (kind) => {
  let svc: TestService;
  let workspace: Folder;

  beforeAll(async () => {
    workspace = makeFolder();
    svc = await startTestService(kind, { ENABLE_SYSTEM_COMMANDS: 'true', MAX_PENDING_PER_USER: '3' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'confirm', path: workspace.path } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    workspace[Symbol.dispose]();
  });
  afterEach(() => {
    const { terminals } = svc.service.deps;
    for (const user of ['local', 'dev-1']) for (const terminal of terminals.listFor(user)) terminals.remove(terminal);
  });

  const open = async () => (await svc.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
  const execute = (id: string, command: string) => svc.request('POST', `/api/terminals/${id}/execute`, { json: { command } });
  const confirm = (commandId: string, confirmed: boolean) => svc.request('POST', '/api/security/confirm', { json: { commandId, confirmed } });
  const pendingIds = async () => ((await svc.request('GET', '/api/security/pending')).body.pending as { id: string }[]).map((p) => p.id);

  it('refuses a critical command with 403 and runs nothing', async () => {
    const id = await open();
    const error = expectEnvelope(await execute(id, 'rm -rf /'), 403, 'SECURITY_VIOLATION');
    expect(error.details).toMatchObject({ risk: 'critical', reasons: expect.arrayContaining([expect.any(String)]) });
    expect((await svc.request('GET', `/api/terminals/${id}`)).body.status).toBe('running');
    expect(await pendingIds()).toEqual([]);
  });

  it('holds a high-risk command (202), lists it, and runs it once confirmed', async () => {
    const id = await open();
    mkdirSync(join(workspace.path, 'build'), { recursive: true });
    const held = await execute(id, 'rm -r build');
    expect(held.status).toBe(202);
    expect(held.body).toEqual({
      success: true,
      executed: false,
      status: 'pending_confirmation',
      commandId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      risk: 'high',
      reasons: expect.arrayContaining([expect.stringMatching(/recursive/i)]),
    });
    expect(existsSync(join(workspace.path, 'build'))).toBe(true);
    const { pending } = (await svc.request('GET', '/api/security/pending')).body;
    expect(pending).toEqual([
      expect.objectContaining({ id: held.body.commandId, command: 'rm -r build', risk: 'high', terminalId: id, workingDirectory: workspace.path }),
    ]);
    expect(Date.parse(pending[0].timestamp)).not.toBeNaN();

    const ran = await confirm(held.body.commandId, true);
    expect(ran.status).toBe(200);
    expect(ran.body).toMatchObject({ success: true, executed: true, output: '', exitCode: 0 });
    expect(existsSync(join(workspace.path, 'build'))).toBe(false);
    expect(await pendingIds()).toEqual([]);
    expectEnvelope(await confirm(held.body.commandId, true), 404, 'NOT_FOUND');
  });

  it('drops a rejected command without running it', async () => {
    const id = await open();
    const held = await execute(id, 'kill 999999');
    expect(held.status).toBe(202);
    expect((await confirm(held.body.commandId, false)).body).toEqual({ success: true, executed: false });
    expect(await pendingIds()).toEqual([]);
    expectEnvelope(await confirm(held.body.commandId, false), 404, 'NOT_FOUND');
    expect((await svc.request('GET', `/api/terminals/${id}/output`)).body.output).not.toContain('kill');
  });

  it('answers 404 for unknown and malformed ids, and 400 and drops the command when its terminal has gone', async () => {
    expectEnvelope(await confirm('00000000-0000-4000-8000-000000000000', true), 404, 'NOT_FOUND');
    expectEnvelope(await confirm('not-an-id', true), 404, 'NOT_FOUND');
    const id = await open();
    const held = await execute(id, 'git reset --hard');
    await svc.request('DELETE', `/api/terminals/${id}`);
    const error = expectEnvelope(await confirm(held.body.commandId, true), 400, 'INVALID_REQUEST');
    expect(error.details.reason).toBe('terminal_gone');
    expect(await pendingIds()).not.toContain(held.body.commandId);
  });

  it('expires a held command after 10 minutes', async () => {
    const id = await open();
    const held = await execute(id, 'chmod -R 755 .');
    await svc.service.deps.store.db.pendingCommand.update({
      where: { id: held.body.commandId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await pendingIds()).not.toContain(held.body.commandId);
    expectEnvelope(await confirm(held.body.commandId, true), 404, 'NOT_FOUND');
  });

  it('caps waiting commands per user with 429 and details.cap', async () => {
    const id = await open();
    const ids: string[] = [];
    for (const command of ['kill 1', 'kill 2', 'kill 3']) ids.push((await execute(id, command)).body.commandId as string);
    const error = expectEnvelope(await execute(id, 'kill 4'), 429, 'RATE_LIMIT_EXCEEDED');
    expect(error.details.cap).toBe(3);
    for (const commandId of ids) await confirm(commandId, false);
  });

  it('runs high-risk commands at once when COMMAND_CONFIRMATION_REQUIRED=false', async () => {
    await using direct = await startTestService(kind, { ENABLE_SYSTEM_COMMANDS: 'true', COMMAND_CONFIRMATION_REQUIRED: 'false' });
    await direct.request('POST', '/api/workspaces/add', { json: { name: 'direct', path: workspace.path } });
    mkdirSync(join(workspace.path, 'gone'), { recursive: true });
    const terminalId = (await direct.request('POST', '/api/terminals', { json: {} })).body.terminalId as string;
    const res = await direct.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'rm -r gone' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, exitCode: 0, risk: 'high' });
    expect(existsSync(join(workspace.path, 'gone'))).toBe(false);
    expectEnvelope(await direct.request('POST', `/api/terminals/${terminalId}/execute`, { json: { command: 'rm -rf /' } }), 403, 'SECURITY_VIOLATION');
  });

  it("lets the issuer and Lead or TheDude decide; pending?all=true is for Lead and TheDude only", async () => {
    const as = (user: User) => callerFor(svc.service.deps, user, '198.51.100.4');
    const dev = as(userWith('dev-1', ['Dev']));
    const otherDev = as(userWith('dev-2', ['Dev']));
    const lead = as(userWith('lead-1', ['Lead']));
    const { terminalId } = await dev.terminals.create({});
    const held = await dev.terminals.execute({ terminalId, command: 'kill 424242', waitForCompletion: true });
    const commandId = held.commandId ?? '';
    expect(held.status).toBe('pending_confirmation');

    expect((await otherDev.security.pending({ all: false })).pending).toEqual([]);
    expect(await errorCodeOf(otherDev.security.confirm({ commandId, confirmed: true }))).toBe('NOT_FOUND');
    expect(await errorCodeOf(otherDev.security.pending({ all: true }))).toBe('FORBIDDEN');
    const denial = await svc.service.deps.store.db.auditEntry.findFirst({ where: { userId: 'dev-2', type: 'access' } });
    expect(denial?.details).toMatchObject({ action: 'denied', missing: 'role Lead' });

    const everyone = (await lead.security.pending({ all: true })).pending;
    expect(everyone).toEqual(expect.arrayContaining([expect.objectContaining({ id: commandId, userId: 'dev-1' })]));
    expect((await lead.security.confirm({ commandId, confirmed: true })).executed).toBe(true);
    const entries = await svc.service.deps.store.db.auditEntry.findMany({ where: { type: 'command', userId: 'lead-1' } });
    expect(entries.map((entry) => (entry.details as { action: string }).action).sort()).toEqual(['confirmed', 'executed']);
    expect(entries[0]?.details).toMatchObject({ commandId, issuedBy: 'dev-1' });
    await dev.terminals.delete({ terminalId });
  });

  it('runs a confirmed command in the folder it was shown in, wherever the shell moved since (CONTRACT §11)', async () => {
    const id = await open();
    mkdirSync(join(workspace.path, 'deep', 'er', 'inner'), { recursive: true });
    writeFileSync(join(workspace.path, 'deep', 'keep.txt'), 'keep');
    await execute(id, 'cd deep/er');
    // Held as high here: it removes the contents of deep/er …
    const held = await execute(id, 'rm -r ./*');
    expect(held.status).toBe(202);
    // … and the shell moves to the workspace's parent, where the same line would remove outside it.
    const moved = await execute(id, 'cd ../../..');
    expect(moved.status).toBe(202);
    expect((await confirm(moved.body.commandId as string, true)).body.executed).toBe(true);
    const confirmed = await confirm(held.body.commandId, true);
    expect(confirmed.body, confirmed.text).toMatchObject({ executed: true, exitCode: 0 });
    expect(existsSync(join(workspace.path, 'deep', 'er', 'inner'))).toBe(false);
    expect(readFileSync(join(workspace.path, 'deep', 'keep.txt'), 'utf8')).toBe('keep');
    expect((await execute(id, 'pwd')).body.output).toBe(join(workspace.path, 'deep', 'er'));
  });
});
