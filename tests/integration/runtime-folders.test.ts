import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ownerRecord, runtimeRootPath } from '../../src/core/sandbox/runtime-folder.js';
import { homesFromPasswd, otherHomes, servicePaths } from '../../src/core/workspaces/workspace-rules.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase } from '../helpers/databases.js';
import { initRepository, makeFolder, type Folder } from '../helpers/fixture-folders.js';
import { describeWithSandbox } from '../helpers/sandbox.js';
import { expectEnvelope, request, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §11 "Workspace registration", from the attacker's side: a terminal's command pipe
// lies in a folder of the service's (its path shows in /proc/self/mountinfo inside the sandbox).
// Registered as a workspace, a second terminal could write commands into the first terminal's
// shell that nobody judged or audited. No spelling of it, of its root or of another instance's
// may become a workspace or a terminal's writable folder; and the folders do not outlive the
// service, even one killed with kill -9.

/** Bind-mounts `source` at `target` (root only): false where this machine does not allow it. */
function bindMount(source: string, target: string): boolean {
  mkdirSync(target, { recursive: true });
  return spawnSync('mount', ['--bind', source, target], { stdio: 'ignore' }).status === 0;
}

function unmount(target: string): void {
  spawnSync('umount', ['-l', target], { stdio: 'ignore' });
}

/** The runtime roots in the temporary folder whose owner record names `pid`. */
function rootsOf(pid: number | undefined): string[] {
  return readdirSync(tmpdir())
    .filter((name) => name.startsWith('assistant-runtime-'))
    .map((name) => join(tmpdir(), name))
    .filter((root) => {
      try {
        return (JSON.parse(readFileSync(join(root, 'owner'), 'utf8')) as { pid: number }).pid === pid;
      } catch {
        return false;
      }
    });
}

describeWithSandbox('runtime folders cannot become workspaces (CONTRACT §11)', () => {
  let svc: TestService;
  let workspace: Folder;
  let fixtures: Folder;
  let terminalId: string;
  let sleeper: ChildProcess;
  const mounts: string[] = [];

  beforeAll(async () => {
    workspace = makeFolder();
    fixtures = makeFolder();
    initRepository(workspace.path);
    sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    svc = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true' });
    const added = await svc.request('POST', '/api/workspaces/add', { json: { name: 'attacked', path: workspace.path } });
    expect(added.status, added.text).toBe(200);
    const created = await svc.request('POST', '/api/terminals', { json: { workingDirectory: workspace.path } });
    expect(created.status, created.text).toBe(200);
    terminalId = created.body.terminalId as string;
  });

  afterAll(async () => {
    for (const target of mounts.reverse()) unmount(target);
    await svc[Symbol.asyncDispose]();
    sleeper.kill('SIGKILL');
    workspace[Symbol.dispose]();
    fixtures[Symbol.dispose]();
  });

  const execute = (command: string, terminal = terminalId, target = svc) => target.request('POST', `/api/terminals/${terminal}/execute`, { json: { command } });

  /** The terminal's own folders on the host: the private root and what lies in it. */
  const liveFolders = () => {
    const root = runtimeRootPath();
    if (root === null) throw new Error('no runtime root while a terminal runs');
    const inside = readdirSync(root).map((name) => join(root, name));
    const shell = inside.find((path) => basename(path).startsWith('shell-'));
    const net = inside.find((path) => basename(path).startsWith('net-'));
    if (shell === undefined || net === undefined) throw new Error(`the terminal's folders are missing: ${inside.join(', ')}`);
    return { root, shell, net };
  };

  const refusedAsWorkspace = async (path: string) => {
    const res = await svc.request('POST', '/api/workspaces/add', { json: { name: 'runtime', path } });
    return expectEnvelope(res, 400, 'WORKSPACE_ERROR').message;
  };

  it("puts a terminal's pipe and proxy folders in one private root, whose path a command can read", async () => {
    const { root, shell, net } = liveFolders();
    for (const folder of [root, shell, net]) expect(statSync(folder).mode & 0o777, folder).toBe(0o700);
    expect(existsSync(join(shell, 'commands'))).toBe(true);
    expect(existsSync(join(net, 'proxy.sock'))).toBe(true);
    // What the attack starts from: the bind mounts name the host folder.
    workspace.file('leak.sh', "#!/bin/bash\ngrep -o 'assistant-runtime-[A-Za-z0-9]*' /proc/self/mountinfo | sort -u\n", 0o755);
    const leaked = await execute('./leak.sh');
    expect(leaked.body.risk, leaked.text).toBe('medium');
    expect(leaked.body.output).toBe(basename(root));
  });

  it("refuses the live terminal's runtime folders as workspaces, however they are spelled", async () => {
    const { root, shell, net } = liveFolders();
    symlinkSync(shell, join(fixtures.path, 'link-to-pipe'));
    const spellings = [root, shell, net, `${shell}/`, join(root, '..', basename(root), basename(shell)), join(fixtures.path, 'link-to-pipe')];
    for (const path of spellings) expect(await refusedAsWorkspace(path), path).toMatch(/runtime folder of this service or another instance/);
    // Bind mounts (root only): the pipe's folder elsewhere, and a folder holding a bind of the root.
    const bound = join(fixtures.path, 'bound');
    const holder = join(fixtures.path, 'holder');
    if (bindMount(shell, bound)) {
      mounts.push(bound);
      expect(await refusedAsWorkspace(bound)).toMatch(new RegExp(`is ${shell} reached by another path`));
      expect(bindMount(root, join(holder, 'inner'))).toBe(true);
      mounts.push(join(holder, 'inner'));
      expect(await refusedAsWorkspace(holder)).toMatch(/holds .*inner, where .* is mounted/);
    } else {
      console.warn('bind-mount spellings not tried: mount --bind is not allowed here');
    }
    const listed = await svc.request('GET', '/api/workspaces');
    expect(listed.body.workspaces.map((entry: { path: string }) => entry.path)).toEqual([workspace.path]);
  });

  it("refuses another instance's runtime root (one still running) and the folders older versions made", async () => {
    const other = join(tmpdir(), `assistant-runtime-other${process.pid}`);
    const legacy = join(tmpdir(), `assistant-shell-legacy${process.pid}`);
    try {
      mkdirSync(join(other, 'shell-abc123'), { recursive: true, mode: 0o700 });
      writeFileSync(join(other, 'owner'), ownerRecord(sleeper.pid ?? 0));
      mkdirSync(legacy, { mode: 0o700 });
      for (const path of [other, join(other, 'shell-abc123'), legacy]) {
        expect(await refusedAsWorkspace(path), path).toMatch(/runtime folder of this service or another instance/);
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
      rmSync(legacy, { recursive: true, force: true });
    }
  });

  it("with WORKSPACE_RESTRICTION_ENABLED=false, a terminal started in another's pipe folder sees it empty and cannot write commands into it", async () => {
    const { shell } = liveFolders();
    await using open = await startTestService('sqlite', { ENABLE_SYSTEM_COMMANDS: 'true', WORKSPACE_RESTRICTION_ENABLED: 'false' });
    const created = await open.request('POST', '/api/terminals', { json: { workingDirectory: shell } });
    expect(created.status, created.text).toBe(200);
    const intruder = created.body.terminalId as string;
    // The folder is not opened (as a workspace would be): the shell starts in an empty folder of
    // that name in its private /tmp, where the write lands in a plain file of its own.
    const attempt = await execute(`bash -c 'ls -A | wc -l; echo "rm -f README.md" > commands; test -p commands && echo the-pipe || echo a-private-file'`, intruder, open);
    expect(attempt.body.output, attempt.text).toBe('0\na-private-file');
    await open.request('DELETE', `/api/terminals/${intruder}`);
    // The first terminal is untouched and still takes its commands from the service alone.
    expect(statSync(join(shell, 'commands')).isFIFO()).toBe(true);
    const own = await execute('cat README.md; echo still-here');
    expect(own.body.output, own.text).toBe('# fixture\nstill-here');
    expect(existsSync(join(workspace.path, 'README.md'))).toBe(true);
  });

  it("refuses another account's home (from this machine's /etc/passwd) and the folders of /var", async () => {
    const homes = otherHomes(homesFromPasswd(readFileSync('/etc/passwd', 'utf8')), servicePaths({ DATABASE_URL: svc.database.url }));
    const real = homes.find(({ home }) => existsSync(home) && statSync(home).isDirectory() && home !== '/tmp');
    if (real === undefined) {
      console.warn("no other account's home exists on this machine: only the fixture cases (tests/unit/workspace-rules.test.ts) ran");
    } else {
      expect(await refusedAsWorkspace(real.home)).toMatch(new RegExp(`is or holds ${real.user}'s home`));
    }
    const varFolders = ['/var/www', '/var/opt', '/var/local', '/var/backups'].filter((path) => existsSync(path));
    expect(varFolders.length).toBeGreaterThan(0);
    for (const path of varFolders) expect(await refusedAsWorkspace(path), path).toMatch(/lies inside \/var, which commands must not reach/);
  });
});

describeWithSandbox('runtime folders do not outlive the service', () => {
  it('a clean stop removes its root; the next start sweeps the root of one killed with kill -9, never a live one', async () => {
    const database = await createTestDatabase('sqlite');
    const workspace = makeFolder();
    const sleeper = spawn('sleep', ['120'], { stdio: 'ignore' });
    const live = join(tmpdir(), `assistant-runtime-live${process.pid}`);
    let first: ChildService | undefined;
    let second: ChildService | undefined;
    try {
      const env = { DATABASE_URL: database.url, ENABLE_SYSTEM_COMMANDS: 'true' };
      first = await spawnService(env);
      const added = await request(first.url, 'POST', '/api/workspaces/add', { json: { name: 'ws', path: workspace.path } });
      expect(added.status, added.text).toBe(200);
      const created = await request(first.url, 'POST', '/api/terminals', { json: {} });
      expect(created.status, created.text).toBe(200);
      const [killedRoot, ...more] = rootsOf(first.child.pid);
      expect(more).toEqual([]);
      if (killedRoot === undefined) throw new Error('the service made no runtime root');
      expect(readdirSync(killedRoot).some((name) => name.startsWith('shell-'))).toBe(true);
      first.child.kill('SIGKILL');
      await first.exit;
      // Nothing of the killed service removed them.
      expect(existsSync(killedRoot)).toBe(true);
      // Another instance, alive, with its root in the same folder.
      mkdirSync(join(live, 'shell-abc123'), { recursive: true, mode: 0o700 });
      writeFileSync(join(live, 'owner'), ownerRecord(sleeper.pid ?? 0));

      second = await spawnService({ ...env, LOG_LEVEL: 'info' });
      expect(existsSync(killedRoot)).toBe(false);
      expect(existsSync(live)).toBe(true);
      expect(second.lines.some((line) => line.includes('removed runtime folders of stopped processes') && line.includes(killedRoot))).toBe(true);
      const again = await request(second.url, 'POST', '/api/terminals', { json: {} });
      expect(again.status, again.text).toBe(200);
      const [ownRoot] = rootsOf(second.child.pid);
      if (ownRoot === undefined) throw new Error('the second service made no runtime root');
      second.child.kill('SIGTERM');
      expect((await second.exit).code).toBe(0);
      expect(existsSync(ownRoot)).toBe(false);
    } finally {
      first?.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      sleeper.kill('SIGKILL');
      rmSync(live, { recursive: true, force: true });
      workspace[Symbol.dispose]();
      await database.drop();
    }
  });
});
