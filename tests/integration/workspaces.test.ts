import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeActiveWorkspace, MAX_DESCRIBED_ENTRIES } from '../../src/core/workspaces/describe-workspace.js';
import { callerFor, errorCodeOf, userWith } from '../helpers/callers.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// CONTRACT §3 (workspace object and statuses), §4 (the service's Git calls), §5 (guards, audit,
// per-user active workspace) for /api/workspaces*, against real Git repositories.

const unknownId = '4b0c5c1e-3f7a-4d2b-9a51-0c6f1e2d3a4b';

// The test's own Git calls never run hooks or fsmonitor either, so the markers below can only
// come from the service; identity and branch name are fixed so the tests do not depend on the host.
const testGitConfig = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', ''],
  ['user.name', 'Test Author'],
  ['user.email', 'test@example.com'],
  ['init.defaultBranch', 'main'],
  ['advice.detachedHead', 'false'],
].flatMap(([key, value]) => ['-c', `${key}=${value}`]);

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...testGitConfig, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Plain Git as a user would run it: the repository's hooks and fsmonitor are live. */
function plainGit(cwd: string, home: string, ...args: string[]) {
  return spawnSync('git', args, { cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } });
}

function commitFile(repo: string, file: string, content: string, message: string, env: Record<string, string> = {}) {
  mkdirSync(join(repo, file, '..'), { recursive: true });
  writeFileSync(join(repo, file), content);
  git(repo, 'add', file);
  execFileSync('git', [...testGitConfig, 'commit', '-q', '-m', message], { cwd: repo, env: { ...process.env, ...env } });
}

function newRepo(path: string): string {
  mkdirSync(path, { recursive: true });
  git(path, 'init', '-q', '-b', 'main');
  commitFile(path, 'README.md', 'hello\n', 'first commit');
  return path;
}


describeOnDatabases('workspaces', (kind) => {
  let svc: TestService;
  let base: string;
  beforeAll(async () => {
    svc = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false' });
    base = realpathSync(mkdtempSync(join(tmpdir(), 'workspaces-test-')));
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    rmSync(base, { recursive: true, force: true });
  });

  const fresh = (name: string) => {
    const path = join(base, `${name}-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(path, { recursive: true });
    return path;
  };

  const add = async (path: string, name = 'ws', target: TestService = svc) => {
    const res = await target.request('POST', '/api/workspaces/add', { json: { name, path } });
    if (res.status !== 200) throw new Error(`add ${path}: ${res.status} ${res.text}`);
    return res.body.workspace as Record<string, any>;
  };



  it('with none registered the list is empty; unknown and malformed ids are 404 on every path', async () => {
    await using own = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false' });
    expect((await own.request('GET', '/api/workspaces')).body).toEqual({ workspaces: [] });
    for (const id of [unknownId, 'not-an-id']) {
      expectEnvelope(await own.request('POST', '/api/workspaces/switch', { json: { workspaceId: id } }), 404, 'NOT_FOUND');
      expectEnvelope(await own.request('DELETE', `/api/workspaces/${id}`), 404, 'NOT_FOUND');
      expectEnvelope(await own.request('POST', `/api/workspaces/${id}/refresh`), 404, 'NOT_FOUND');
      expectEnvelope(await own.request('GET', `/api/workspaces/${id}/branches`), 404, 'NOT_FOUND');
      expectEnvelope(await own.request('POST', `/api/workspaces/${id}/switch-branch`, { json: { branchName: 'main' } }), 404, 'NOT_FOUND');
    }
    expect((await own.request('POST', '/api/workspaces/refresh-all')).body).toEqual({ success: true, workspaces: [] });
  });

  it('add stores the real path with a first refresh; the first workspace is the default, add does not switch', async () => {
    await using own = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false' });
    const repo = newRepo(fresh('repo'));
    symlinkSync(repo, `${repo}-alias`);
    const res = await own.request('POST', '/api/workspaces/add', {
      json: { name: '  Main repo  ', path: `${repo}-alias/`, description: 'the app' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      workspaceId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      workspace: {
        id: res.body.workspaceId,
        name: 'Main repo',
        path: repo,
        branch: 'main',
        status: 'clean',
        description: 'the app',
        active: true,
        changes: { modified: 0, added: 0, deleted: 0, untracked: 0 },
        ahead: 0,
        behind: 0,
      },
    });
    const plain = fresh('plain');
    const second = await add(plain, 'Plain folder', own);
    expect(second).toMatchObject({ path: plain, status: 'not_git', branch: '', description: '', active: false });

    const list = (await own.request('GET', '/api/workspaces')).body.workspaces as Record<string, any>[];
    expect(list.map((w) => [w.name, w.active, w.status])).toEqual([
      ['Main repo', true, 'clean'],
      ['Plain folder', false, 'not_git'],
    ]);
    expect(list[0]).toMatchObject({ changes: { modified: 0, added: 0, deleted: 0, untracked: 0 }, ahead: 0, behind: 0 });
  });

  it('add refuses what cannot be a workspace with 400 WORKSPACE_ERROR naming the problem', async () => {
    const repo = newRepo(fresh('dup'));
    await add(repo, 'dup');
    const file = join(fresh('file'), 'a.txt');
    writeFileSync(file, 'x');
    const etcLink = join(fresh('links'), 'etc-link');
    symlinkSync('/etc', etcLink);
    const cases: [string, RegExp][] = [
      ['relative/path', /absolute/],
      [join(base, 'does-not-exist'), /does not exist/],
      [file, /not a directory/],
      ['/', /system directory/],
      ['/etc', /system directory/],
      ['/usr/lib', /system directory/],
      ['/proc/self', /system directory/],
      [etcLink, /system directory/],
      [repo, /already registered/],
      [`${repo}/../${repo.split('/').pop() ?? ''}/`, /already registered/],
    ];
    for (const [path, message] of cases) {
      const error = expectEnvelope(await svc.request('POST', '/api/workspaces/add', { json: { name: 'x', path } }), 400, 'WORKSPACE_ERROR');
      expect(error.message, path).toMatch(message);
    }
  });

  it('add validates name and description (400 INVALID_REQUEST with issues)', async () => {
    const path = fresh('valid');
    for (const body of [
      { name: '   ', path },
      { name: 'n'.repeat(201), path },
      { name: 'ok', path, description: 'd'.repeat(2001) },
      { path },
      { name: 'ok' },
    ]) {
      const error = expectEnvelope(await svc.request('POST', '/api/workspaces/add', { json: body }), 400, 'INVALID_REQUEST');
      expect(error.details.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: expect.any(Array) })]));
    }
    expect((await svc.request('GET', '/api/workspaces')).body.workspaces.some((w: { path: string }) => w.path === path)).toBe(false);
  });

  it('WORKSPACE_ALLOWED_ROOTS admits its roots and below (by real path) and nothing else', async () => {
    const allowed = fresh('allowed');
    const inner = newRepo(join(allowed, 'inner'));
    const outside = fresh('outside');
    symlinkSync(outside, join(allowed, 'escape'));
    symlinkSync(allowed, `${allowed}-link`);
    await using own = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false', WORKSPACE_ALLOWED_ROOTS: `/nonexistent-root,${allowed}-link` });
    const first = await add(inner, 'inner', own);
    expect(first.path).toBe(inner);
    // Workspaces may not nest (CONTRACT §11 pinning): the root itself only once the inner one is gone.
    expectEnvelope(await own.request('POST', '/api/workspaces/add', { json: { name: 'root itself', path: allowed } }), 400, 'WORKSPACE_ERROR');
    await own.request('DELETE', `/api/workspaces/${first.id as string}`);
    expect((await add(allowed, 'root itself', own)).path).toBe(allowed);
    for (const path of [outside, join(allowed, 'escape')]) {
      const error = expectEnvelope(await own.request('POST', '/api/workspaces/add', { json: { name: 'x', path } }), 400, 'WORKSPACE_ERROR');
      expect(error.message).toMatch(/WORKSPACE_ALLOWED_ROOTS/);
    }
  });

  it('refresh counts changes and ahead/behind against the upstream, stores them, and the list shows them', async () => {
    const origin = fresh('origin');
    git(origin, 'init', '-q', '--bare', '-b', 'main');
    const seed = fresh('seed');
    git(seed, 'clone', '-q', origin, '.');
    commitFile(seed, 'README.md', 'one\n', 'one');
    commitFile(seed, 'other.txt', 'other\n', 'other');
    git(seed, 'push', '-q', 'origin', 'main');
    const work = fresh('work');
    git(work, 'clone', '-q', origin, '.');
    commitFile(seed, 'remote.txt', 'r\n', 'remote change');
    git(seed, 'push', '-q', 'origin', 'main');
    commitFile(work, 'local.txt', 'l\n', 'local change');
    git(work, 'fetch', '-q');

    const workspace = await add(work, 'tracked');
    expect(workspace).toMatchObject({ status: 'clean', branch: 'main', ahead: 1, behind: 1 });

    writeFileSync(join(work, 'README.md'), 'changed\n');
    writeFileSync(join(work, 'staged.txt'), 'new\n');
    git(work, 'add', 'staged.txt');
    rmSync(join(work, 'other.txt'));
    writeFileSync(join(work, 'untracked.txt'), 'u\n');
    const res = await svc.request('POST', `/api/workspaces/${workspace.id}/refresh`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      workspace: expect.objectContaining({
        id: workspace.id,
        status: 'dirty',
        branch: 'main',
        changes: { modified: 1, added: 1, deleted: 1, untracked: 1 },
        ahead: 1,
        behind: 1,
      }),
    });
    const listed = (await svc.request('GET', '/api/workspaces')).body.workspaces.find((w: { id: string }) => w.id === workspace.id);
    expect(listed).toMatchObject({ status: 'dirty', changes: { modified: 1, added: 1, deleted: 1, untracked: 1 }, ahead: 1, behind: 1 });
    const stored = await svc.service.deps.store.db.workspace.findUnique({ where: { id: workspace.id } });
    expect(stored?.refreshedAt).toBeInstanceOf(Date);
  });

  it('a subdirectory of a repository is error (its .git lies outside, CONTRACT §11); a detached HEAD reports "HEAD"; a .git folder is refused', async () => {
    const repo = newRepo(fresh('parent'));
    commitFile(repo, 'pkg/index.ts', 'export {};\n', 'pkg');
    expect(await add(join(repo, 'pkg'), 'sub')).toMatchObject({ status: 'error', branch: '' });
    const detached = newRepo(fresh('detached'));
    git(detached, 'checkout', '-q', '--detach', 'HEAD');
    expect(await add(detached, 'detached')).toMatchObject({ status: 'clean', branch: 'HEAD' });
    const gitDir = join(newRepo(fresh('inner-git')), '.git');
    const refused = await svc.request('POST', '/api/workspaces/add', { json: { name: 'git dir', path: gitDir } });
    expect(expectEnvelope(refused, 400, 'WORKSPACE_ERROR').message).toMatch(/\.git folder/);
  });

  it('a vanished path is listed as missing without a refresh; refresh and refresh-all report missing and error, never fail', async () => {
    const doomed = newRepo(fresh('doomed'));
    const gone = await add(doomed, 'doomed');
    const broken = newRepo(fresh('broken'));
    const brokenWs = await add(broken, 'broken');
    rmSync(doomed, { recursive: true, force: true });
    writeFileSync(join(broken, '.git', 'index'), 'this is not an index');

    const listed = (await svc.request('GET', '/api/workspaces')).body.workspaces as Record<string, any>[];
    expect(listed.find((w) => w.id === gone.id)).toMatchObject({ status: 'missing', branch: '' });

    const one = await svc.request('POST', `/api/workspaces/${brokenWs.id}/refresh`);
    expect(one.status).toBe(200);
    expect(one.body.workspace).toMatchObject({ status: 'error', branch: '' });

    const all = await svc.request('POST', '/api/workspaces/refresh-all');
    expect(all.status).toBe(200);
    const byId = new Map((all.body.workspaces as Record<string, any>[]).map((w) => [w.id, w]));
    expect(byId.get(gone.id)).toMatchObject({ status: 'missing', branch: '', changes: { modified: 0, added: 0, deleted: 0, untracked: 0 } });
    expect(byId.get(brokenWs.id)).toMatchObject({ status: 'error' });
    expect(all.body.workspaces.length).toBe((await svc.request('GET', '/api/workspaces')).body.workspaces.length);
  });

  it('branches lists local branches with their last commit in UTC, marks the current one, and handles an unborn branch', async () => {
    const repo = newRepo(fresh('branches'));
    git(repo, 'switch', '-q', '-c', 'feature/x');
    commitFile(repo, 'f.txt', 'f\n', 'Feature work', { GIT_AUTHOR_DATE: '2024-01-02T03:04:05+02:00' });
    git(repo, 'switch', '-q', 'main');
    const workspace = await add(repo, 'branches');
    const res = await svc.request('GET', `/api/workspaces/${workspace.id}/branches`);
    expect(res.status).toBe(200);
    const featureHash = git(repo, 'rev-parse', 'feature/x').trim();
    expect(res.body.branches).toEqual([
      { name: 'feature/x', current: false, lastCommit: { hash: featureHash, message: 'Feature work', author: 'Test Author', date: '2024-01-02T01:04:05.000Z' } },
      { name: 'main', current: true, lastCommit: expect.objectContaining({ message: 'first commit', author: 'Test Author' }) },
    ]);

    const empty = fresh('empty');
    git(empty, 'init', '-q', '-b', 'trunk');
    const emptyWs = await add(empty, 'empty');
    expect(emptyWs).toMatchObject({ status: 'clean', branch: 'trunk' });
    expect((await svc.request('GET', `/api/workspaces/${emptyWs.id}/branches`)).body).toEqual({
      branches: [{ name: 'trunk', current: true, lastCommit: null }],
    });

    const corrupt = newRepo(fresh('corrupt'));
    const corruptWs = await add(corrupt, 'corrupt');
    writeFileSync(join(corrupt, '.git', 'packed-refs'), 'garbage\n');
    const broken = expectEnvelope(await svc.request('GET', `/api/workspaces/${corruptWs.id}/branches`), 400, 'WORKSPACE_ERROR');
    expect(broken.message).toMatch(/packed-refs/);

    const plain = await add(fresh('no-git'), 'no git');
    expectEnvelope(await svc.request('GET', `/api/workspaces/${plain.id}/branches`), 400, 'WORKSPACE_ERROR');
    const vanishing = newRepo(fresh('vanishing'));
    const vanishingWs = await add(vanishing, 'vanishing');
    rmSync(vanishing, { recursive: true, force: true });
    expectEnvelope(await svc.request('GET', `/api/workspaces/${vanishingWs.id}/branches`), 400, 'WORKSPACE_ERROR');
  });

  it('switch-branch checks out an existing local branch, stores the new state and audits from/to', async () => {
    const repo = newRepo(fresh('switch'));
    git(repo, 'branch', 'develop');
    const workspace = await add(repo, 'switch');
    const res = await svc.request('POST', `/api/workspaces/${workspace.id}/switch-branch`, { json: { branchName: 'develop' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, currentBranch: 'develop' });
    expect(git(repo, 'branch', '--show-current').trim()).toBe('develop');
    const listed = (await svc.request('GET', '/api/workspaces')).body.workspaces.find((w: { id: string }) => w.id === workspace.id);
    expect(listed).toMatchObject({ branch: 'develop', status: 'clean' });
    const entries = await svc.service.deps.store.db.auditEntry.findMany({ where: { type: 'workspace', userId: 'local' } });
    const entry = entries.find((e) => (e.details as { action?: string }).action === 'branch_switched' && (e.details as { workspaceId?: string }).workspaceId === workspace.id);
    expect(entry).toMatchObject({
      ip: '127.0.0.1',
      risk: null,
      details: { action: 'branch_switched', workspaceId: workspace.id, from: 'main', to: 'develop' },
    });
  });

  it('switch-branch refuses option and range injection before any Git call, and never creates or guesses a branch', async () => {
    const origin = fresh('inj-origin');
    git(origin, 'init', '-q', '--bare', '-b', 'main');
    const seed = newRepo(fresh('inj-seed'));
    git(seed, 'remote', 'add', 'origin', origin);
    git(seed, 'push', '-q', 'origin', 'main');
    git(seed, 'push', '-q', 'origin', 'main:remote-only');
    const repo = fresh('inj');
    git(repo, 'clone', '-q', origin, '.');
    const workspace = await add(repo, 'inject');
    const branchesBefore = git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads');

    for (const branchName of ['-f', '--orphan', '--orphan=evil', '-c', 'a..b', '../x', 'has space', '@{-1}', 'x.lock', '', 'HEAD']) {
      const error = expectEnvelope(
        await svc.request('POST', `/api/workspaces/${workspace.id}/switch-branch`, { json: { branchName } }),
        400,
        'INVALID_REQUEST',
      );
      expect(error.details.issues, branchName).toEqual([expect.objectContaining({ path: ['branchName'] })]);
    }
    for (const branchName of ['remote-only', 'origin/main', 'does-not-exist']) {
      const error = expectEnvelope(
        await svc.request('POST', `/api/workspaces/${workspace.id}/switch-branch`, { json: { branchName } }),
        400,
        'WORKSPACE_ERROR',
      );
      expect(error.message).toMatch(/Unknown branch/);
    }
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads')).toBe(branchesBefore);
    expect(git(repo, 'branch', '--show-current').trim()).toBe('main');
  });

  it('a checkout blocked by local changes is WORKSPACE_ERROR carrying Git\'s message; nothing moves', async () => {
    const repo = newRepo(fresh('blocked'));
    git(repo, 'switch', '-q', '-c', 'other');
    commitFile(repo, 'README.md', 'other version\n', 'other');
    git(repo, 'switch', '-q', 'main');
    writeFileSync(join(repo, 'README.md'), 'local edit\n');
    const workspace = await add(repo, 'blocked');
    const error = expectEnvelope(
      await svc.request('POST', `/api/workspaces/${workspace.id}/switch-branch`, { json: { branchName: 'other' } }),
      400,
      'WORKSPACE_ERROR',
    );
    expect(error.message).toMatch(/would be overwritten by checkout/);
    expect(error.message).toContain('README.md');
    expect(git(repo, 'branch', '--show-current').trim()).toBe('main');
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('local edit\n');
  });

  it("never runs a repository's hooks or fsmonitor (and the same repository does run them under plain Git)", async () => {
    const repo = newRepo(fresh('hooked'));
    git(repo, 'branch', 'other');
    const markers = fresh('markers');
    const hookScript = (name: string) => `#!/bin/sh\necho ran >> "${join(markers, name)}"\n`;
    for (const hook of ['post-checkout', 'reference-transaction', 'post-index-change']) {
      writeFileSync(join(repo, '.git', 'hooks', hook), hookScript(hook));
      chmodSync(join(repo, '.git', 'hooks', hook), 0o755);
    }
    const fsmonitor = join(markers, '..', `fsmonitor-${Math.random().toString(36).slice(2)}.sh`);
    writeFileSync(fsmonitor, hookScript('fsmonitor'));
    chmodSync(fsmonitor, 0o755);
    git(repo, 'config', 'core.fsmonitor', fsmonitor);

    const workspace = await add(repo, 'hooked');
    expect((await svc.request('POST', `/api/workspaces/${workspace.id}/refresh`)).body.workspace.status).toBe('clean');
    expect((await svc.request('GET', `/api/workspaces/${workspace.id}/branches`)).status).toBe(200);
    const switched = await svc.request('POST', `/api/workspaces/${workspace.id}/switch-branch`, { json: { branchName: 'other' } });
    expect(switched.body.currentBranch).toBe('other');
    expect((await svc.request('POST', '/api/workspaces/refresh-all')).status).toBe(200);
    expect(existsSync(join(markers, 'post-checkout'))).toBe(false);
    expect(existsSync(join(markers, 'reference-transaction'))).toBe(false);
    expect(existsSync(join(markers, 'fsmonitor'))).toBe(false);

    // The setup is live: the same commands under plain Git do run them.
    const home = fresh('home');
    expect(plainGit(repo, home, 'status').status).toBe(0);
    expect(plainGit(repo, home, 'checkout', '-q', 'main').status).toBe(0);
    expect(existsSync(join(markers, 'fsmonitor'))).toBe(true);
    expect(existsSync(join(markers, 'post-checkout'))).toBe(true);
  });

  it("refresh never writes the repository's index (GIT_OPTIONAL_LOCKS=0), while plain git status would", async () => {
    const repo = newRepo(fresh('locks'));
    const workspace = await add(repo, 'locks');
    const index = join(repo, '.git', 'index');
    // A new mtime with unchanged content: status must re-check the file, and would store the result.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(repo, 'README.md'), later, later);
    const before = statSync(index).mtimeMs;
    expect((await svc.request('POST', `/api/workspaces/${workspace.id}/refresh`)).body.workspace.status).toBe('clean');
    expect(statSync(index).mtimeMs).toBe(before);
    expect(plainGit(repo, fresh('home'), 'status').status).toBe(0);
    expect(statSync(index).mtimeMs).not.toBe(before);
  });

  it.skipIf(process.getuid?.() !== 0)('a repository owned by another user still refreshes (needs root to chown; skipped otherwise)', async () => {
    const repo = newRepo(fresh('foreign'));
    git(repo, 'branch', 'side');
    execFileSync('chown', ['-R', 'nobody', repo]);
    const home = fresh('home');
    // Plain Git refuses it: the service's safe.directory setting is what makes it work.
    expect(plainGit(repo, home, 'status').stderr).toMatch(/dubious ownership/);
    const workspace = await add(repo, 'foreign');
    expect(workspace).toMatchObject({ status: 'clean', branch: 'main' });
    writeFileSync(join(repo, 'new.txt'), 'x');
    const refreshed = await svc.request('POST', `/api/workspaces/${workspace.id}/refresh`);
    expect(refreshed.body.workspace).toMatchObject({ status: 'dirty', branch: 'main', changes: { untracked: 1 } });
    const branches = await svc.request('GET', `/api/workspaces/${workspace.id}/branches`);
    expect(branches.body.branches.map((b: { name: string }) => b.name)).toEqual(['main', 'side']);
  });

  it('the active workspace is per user; delete clears it, keeps the files, and is audited', async () => {
    await using own = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false' });
    const deps = own.service.deps;
    const alice = callerFor(deps, userWith('alice', ['Dev']));
    const bob = callerFor(deps, userWith('bob', ['Dev']));
    const first = await alice.workspaces.add({ name: 'first', path: newRepo(fresh('first')) });
    const second = await alice.workspaces.add({ name: 'second', path: fresh('second') });
    expect(first.workspace.active).toBe(true);
    expect(second.workspace.active).toBe(false);

    const switched = await alice.workspaces.switch({ workspaceId: second.workspaceId });
    expect(switched).toMatchObject({ success: true, activeWorkspace: { id: second.workspaceId, active: true } });
    const activeOf = async (caller: typeof alice) => (await caller.workspaces.list({})).workspaces.filter((w) => w.active).map((w) => w.name);
    expect(await activeOf(alice)).toEqual(['second']);
    expect(await activeOf(bob)).toEqual(['first']);
    // Adding does not move the caller.
    const third = await alice.workspaces.add({ name: 'third', path: fresh('third') });
    expect(third.workspace.active).toBe(false);
    expect(await activeOf(alice)).toEqual(['second']);
    // The conversation context follows the caller's own choice.
    expect((await alice.context.get({})).context.workspace?.id).toBe(second.workspaceId);
    expect((await bob.context.get({})).context.workspace?.id).toBe(first.workspaceId);

    const deleted = await alice.workspaces.delete({ workspaceId: second.workspaceId });
    expect(deleted).toMatchObject({ success: true, message: expect.any(String) });
    expect(existsSync(second.workspace.path)).toBe(true);
    expect(await activeOf(alice)).toEqual(['first']);
    expect(await errorCodeOf(alice.workspaces.switch({ workspaceId: second.workspaceId }))).toBe('NOT_FOUND');

    const audited = await deps.store.db.auditEntry.findMany({ where: { type: 'workspace', userId: 'alice' } });
    const details = audited.map((entry) => entry.details as Record<string, unknown>);
    expect(details.map((d) => d.action).sort()).toEqual(['added', 'added', 'added', 'deleted', 'switched']);
    expect(audited.every((entry) => entry.ip === '203.0.113.9' && entry.risk === null)).toBe(true);
    expect(details).toContainEqual({ action: 'added', workspaceId: first.workspaceId, name: 'first', path: first.workspace.path });
    expect(details).toContainEqual(expect.objectContaining({ action: 'switched', workspaceId: second.workspaceId }));
    expect(details).toContainEqual(expect.objectContaining({ action: 'deleted', workspaceId: second.workspaceId, path: second.workspace.path }));
  });


  it("describeActiveWorkspace gives the chat engine the caller's workspace with its sorted top-level entries", async () => {
    await using own = await startTestService(kind, { RATE_LIMIT_ENABLED: 'false' });
    const store = own.service.deps;
    expect(await describeActiveWorkspace(store, 'local')).toBeNull();
    const repo = newRepo(fresh('described'));
    const workspace = await add(repo, 'described', own);
    mkdirSync(join(repo, 'src'));
    symlinkSync('README.md', join(repo, 'link'));
    execFileSync('mkfifo', [join(repo, 'pipe')]);
    expect(await describeActiveWorkspace(store, 'local')).toEqual({
      id: workspace.id,
      name: 'described',
      path: repo,
      branch: 'main',
      status: 'clean',
      entries: [
        { name: '.git', type: 'directory' },
        { name: 'README.md', type: 'file' },
        { name: 'link', type: 'symlink' },
        { name: 'pipe', type: 'other' },
        { name: 'src', type: 'directory' },
      ],
      truncated: false,
    });

    const crowded = fresh('crowded');
    for (let index = 0; index < MAX_DESCRIBED_ENTRIES + 5; index++) writeFileSync(join(crowded, `f${String(index).padStart(3, '0')}`), '');
    const crowdedWs = await add(crowded, 'crowded', own);
    await own.request('POST', '/api/workspaces/switch', { json: { workspaceId: crowdedWs.id } });
    const described = await describeActiveWorkspace(store, 'local');
    expect(described?.entries.length).toBe(MAX_DESCRIBED_ENTRIES);
    expect(described?.entries[0]).toEqual({ name: 'f000', type: 'file' });
    expect(described?.truncated).toBe(true);
    // Another user still has the first workspace.
    expect((await describeActiveWorkspace(store, 'someone-else'))?.id).toBe(workspace.id);

    rmSync(crowded, { recursive: true, force: true });
    expect(await describeActiveWorkspace(store, 'local')).toMatchObject({ status: 'missing', branch: '', entries: [], truncated: false });
  });

  it('User may list but not add, delete or switch; Dev may add and delete', async () => {
    const deps = svc.service.deps;
    const user = callerFor(deps, userWith('plain', ['User']));
    const admin = callerFor(deps, userWith('admin', ['Admin']));
    const path = fresh('guarded');
    expect((await user.workspaces.list({})).workspaces.length).toBeGreaterThan(0);
    expect(await errorCodeOf(user.workspaces.add({ name: 'x', path }))).toBe('FORBIDDEN');
    expect(await errorCodeOf(admin.workspaces.add({ name: 'x', path }))).toBe('FORBIDDEN');
    expect(await errorCodeOf(user.workspaces.switch({ workspaceId: unknownId }))).toBe('FORBIDDEN');
    expect(await errorCodeOf(user.workspaces.delete({ workspaceId: unknownId }))).toBe('FORBIDDEN');
    const dev = callerFor(deps, userWith('dev', ['Dev']));
    const added = await dev.workspaces.add({ name: 'x', path });
    expect((await dev.workspaces.delete({ workspaceId: added.workspaceId })).success).toBe(true);
  });
});
