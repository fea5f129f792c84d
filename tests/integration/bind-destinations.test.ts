import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PinnedBinds, WriterBinds } from '../../src/core/sandbox/pinned-binds.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// bubblewrap makes a bind's destination by name, following links, and creates it when missing
// (`creat` on a file, `mkdir` on folders) before it mounts: as root, on the host. A sandbox that
// can rename an entry below a workspace while another sandbox starts could swap that entry for a
// link to any host file, which would then be created or emptied. These tests are that attack:
// an entry is bound only when every running sandbox that writes the workspace has it bound too.

describe('which .git entries a sandbox binds while others run', () => {
  it('leaves unbound an entry a running writer lacks, and binds it once that writer has gone', () => {
    using folder = makeFolder();
    initRepository(folder.path);
    const registry = new WriterBinds();
    const first = new PinnedBinds(registry);
    first.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    const forget = registry.register([folder.path], first.binds.map((bind) => bind.target));
    first.close();
    // Made after the first sandbox started: not a mount point there, so it could swap it.
    mkdirSync(join(folder.path, '.git', 'worktrees'));
    const targets = (pins: PinnedBinds) => pins.binds.map((bind) => bind.target.slice(folder.path.length));
    const second = new PinnedBinds(registry);
    second.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    second.close();
    expect(targets(second)).toEqual(['', '/.git', '/.git/config', '/.git/hooks', '/.git/info', '/.git/modules']);
    forget();
    const third = new PinnedBinds(registry);
    third.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    third.close();
    expect(targets(third)).toEqual(['', '/.git', '/.git/config', '/.git/hooks', '/.git/info', '/.git/worktrees', '/.git/modules']);
  });

  it('binds nothing below a .git that a running writer made itself', () => {
    using folder = makeFolder();
    const registry = new WriterBinds();
    const first = new PinnedBinds(registry);
    first.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    first.close();
    registry.register([folder.path], first.binds.map((bind) => bind.target));
    initRepository(folder.path);
    const second = new PinnedBinds(registry);
    second.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    second.close();
    expect(second.binds.map((bind) => bind.target)).toEqual([folder.path]);
    // A writer of another folder does not count.
    const elsewhere = new WriterBinds();
    elsewhere.register(['/var/tmp/some-other-workspace'], []);
    const third = new PinnedBinds(elsewhere);
    third.addWorkspace(folder.path, null, { writable: true, protectGit: true });
    third.close();
    expect(third.binds.length).toBeGreaterThan(1);
  });
});

describeWithSandbox('a running sandbox racing the start of others', () => {
  let svc: TestService;
  let workspace: Folder;
  let plain: Folder;
  let victims: Folder;

  beforeAll(async () => {
    workspace = makeFolder();
    plain = makeFolder();
    victims = makeFolder();
    initRepository(workspace.path);
    svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', COMMAND_TIMEOUT_MS: '500', LOG_LEVEL: 'error' });
    for (const [name, folder] of [['raced', workspace], ['plain', plain]] as const) {
      expect((await svc.request('POST', '/api/workspaces/add', { json: { name, path: folder.path } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    for (const folder of [workspace, plain, victims]) folder[Symbol.dispose]();
  });

  const open = async (where = workspace) => {
    const created = await svc.request('POST', '/api/terminals', { json: { workingDirectory: where.path } });
    expect(created.status, created.text).toBe(200);
    return created.body.terminalId as string;
  };

  it.each([
    ['.git/commondir, made after the racer started', 'repository', 'commondir'],
    ['.git/config in a .git the racer made itself', 'plain', 'config'],
  ] as const)('cannot create or empty a host file through %s', async (_name, which, entry) => {
    const target = which === 'plain' ? plain : workspace;
    const victim = victims.file(`victim-${which}.txt`, 'IMPORTANT\n');
    const created = join(victims.path, `created-${which}`);
    // Swaps the entry, as fast as it can, between a dangling link (bwrap's stat fails, so it
    // would `creat`) and a link to the victim (which that creat would empty).
    target.file(
      'flip.py',
      [
        '#!/usr/bin/python3',
        'import ctypes, os',
        'renameat2 = ctypes.CDLL(None).renameat2',
        'os.makedirs(".git", exist_ok=True)',
        `entry = b".git/${entry}"`,
        'open(entry, "w").close()',
        `os.symlink(${JSON.stringify(`/oldroot${created}`)}, ".git/d")`,
        `os.symlink(${JSON.stringify(`/oldroot${victim}`)}, ".git/v")`,
        'while True:',
        '    for name in (b".git/d", b".git/v"):',
        '        renameat2(-100, entry, -100, name, 2)',
      ].join('\n'),
      0o755,
    );
    const racer = await open(target);
    const started = await svc.request('POST', `/api/terminals/${racer}/execute`, { json: { command: './flip.py', waitForCompletion: false } });
    expect(started.status, started.text).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // A start that fails (its mounts not where they should be) fails closed; what counts is the host.
    for (let attempt = 0; attempt < 40; attempt += 1) {
      const created = await svc.request('POST', '/api/terminals', { json: { workingDirectory: target.path } });
      if (created.status === 200) await svc.request('DELETE', `/api/terminals/${String(created.body.terminalId)}`);
    }
    await svc.request('DELETE', `/api/terminals/${racer}`);
    expect(readFileSync(victim, 'utf8')).toBe('IMPORTANT\n');
    expect(existsSync(created)).toBe(false);
  });

  it("makes every submodule's repository read-only, names with slashes and deep nesting included", async () => {
    mkdirSync(join(workspace.path, '.git', 'modules', 'vendor', 'lib', 'modules', 'a', 'modules', 'b', 'modules', 'c'), { recursive: true });
    workspace.file('.git/modules/vendor/lib/config', '[core]\n');
    workspace.file('.git/modules/vendor/lib/modules/a/modules/b/modules/c/config', '[core]\n');
    const id = await open();
    const script = [
      "for entry in vendor/lib/config vendor/lib/modules/a/modules/b/modules/c/config; do { printf '[core]\\n\\tfsmonitor = touch x\\n' >> .git/modules/$entry; } 2>/dev/null && echo written || echo refused; done",
      'mv .git/modules/vendor .git/modules/held 2>/dev/null && echo moved || echo move-refused',
      'mkdir .git/modules/new 2>/dev/null && echo made || echo make-refused',
    ].join('; ');
    workspace.file('modules.sh', `#!/bin/bash\n${script}\n`, 0o755);
    const ran = await svc.request('POST', `/api/terminals/${id}/execute`, { json: { command: './modules.sh' } });
    expect(String(ran.body.output).split(/\r?\n/), ran.text).toEqual(['refused', 'refused', 'move-refused', 'make-refused']);
    await svc.request('DELETE', `/api/terminals/${id}`);
  });

  it('still starts terminals, with a bounded number of descriptors, when .git/modules holds thousands of folders', async () => {
    for (let index = 0; index < 3000; index += 1) mkdirSync(join(workspace.path, '.git', 'modules', `m${index}`, 'hooks'), { recursive: true });
    const descriptors = () => readdirSync('/proc/self/fd').length;
    const before = descriptors();
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const id = await open();
      await svc.request('DELETE', `/api/terminals/${id}`);
    }
    expect(descriptors() - before).toBeLessThan(10);
  });
});

describeWithSandbox('a terminal folder around a workspace (restriction off)', () => {
  let svc: TestService;
  let outer: Folder;

  beforeAll(async () => {
    outer = makeFolder();
    mkdirSync(join(outer.path, 'inner'));
    initRepository(join(outer.path, 'inner'));
    svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', WORKSPACE_RESTRICTION_ENABLED: 'false' });
    expect((await svc.request('POST', '/api/workspaces/add', { json: { name: 'inner', path: join(outer.path, 'inner') } })).status).toBe(200);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    outer[Symbol.dispose]();
  });

  it('is refused, so a writable bind of it cannot cover the workspace’s read-only .git entries', async () => {
    const refused = await svc.request('POST', '/api/terminals', { json: { workingDirectory: outer.path } });
    expectEnvelope(refused, 400, 'WORKSPACE_ERROR');
    expect(refused.body.error.message).toMatch(/holds the workspace/);
  });
});
