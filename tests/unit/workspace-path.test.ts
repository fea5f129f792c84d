import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors/app-error.js';
import { isSystemPath, resolveWorkspacePath } from '../../src/core/workspaces/workspace-path.js';
import { registrationProblem } from '../../src/core/workspaces/workspace-rules.js';

// Which directories may become a workspace (CONTRACT §1 WORKSPACE_ALLOWED_ROOTS, §2 WORKSPACE_ERROR).

let base: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'workspace-path-')));
  mkdirSync(join(base, 'project'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

/** The settings the rules read: a database outside the test's folders, and the allowed roots. */
const settings = (roots: string[] = [], databaseUrl = 'file:/var/tmp/workspace-path-test-data/assistant.db') => ({
  DATABASE_URL: databaseUrl,
  WORKSPACE_ALLOWED_ROOTS: roots,
});

async function refusal(path: string, roots: string[] = []): Promise<string> {
  const error = await resolveWorkspacePath(path, settings(roots)).then(() => null, (thrown: unknown) => thrown);
  if (!(error instanceof AppError) || error.code !== 'WORKSPACE_ERROR') throw new Error(`expected WORKSPACE_ERROR for ${path}, got ${String(error)}`);
  return error.message;
}

describe('resolveWorkspacePath', () => {
  it('returns the real path of an existing directory, whatever the spelling', async () => {
    symlinkSync(join(base, 'project'), join(base, 'alias'));
    expect(await resolveWorkspacePath(join(base, 'project'), settings([]))).toBe(join(base, 'project'));
    expect(await resolveWorkspacePath(join(base, 'alias'), settings([]))).toBe(join(base, 'project'));
    expect(await resolveWorkspacePath(`${base}/project/../project/`, settings([]))).toBe(join(base, 'project'));
  });

  it('names the problem: relative, missing, not a directory', async () => {
    expect(await refusal('project')).toMatch(/absolute/);
    expect(await refusal('./x')).toMatch(/absolute/);
    expect(await refusal(join(base, 'nope'))).toMatch(/does not exist/);
    writeFileSync(join(base, 'file.txt'), 'x');
    expect(await refusal(join(base, 'file.txt'))).toMatch(/not a directory/);
  });

  it('refuses "/", the system directories and anything under them, also through a link', async () => {
    for (const path of ['/', '/etc', '/usr', '/usr/local', '/bin', '/sbin', '/lib', '/lib64', '/boot', '/proc', '/sys', '/dev', '/etc/ssl', '/proc/self']) {
      expect(await refusal(path), path).toMatch(/system directory/);
    }
    symlinkSync('/etc', join(base, 'etc-link'));
    expect(await refusal(join(base, 'etc-link'))).toMatch(/system directory/);
    expect(await refusal(`${base}/../../etc`)).toMatch(/system directory/);
  });

  it('treats every top-level /lib* name as a system directory', async () => {
    for (const path of ['/lib32', '/libx32', '/lib64/x']) expect(await isSystemPath(path), path).toBe(true);
    expect(await isSystemPath('/srv/lib')).toBe(false);
    expect(await isSystemPath(join(base, 'project'))).toBe(false);
  });

  it('with WORKSPACE_ALLOWED_ROOTS, accepts a root or below it (compared by real paths) and refuses the rest', async () => {
    mkdirSync(join(base, 'allowed', 'inner'), { recursive: true });
    symlinkSync(join(base, 'allowed'), join(base, 'allowed-link'));
    const roots = [join(base, 'allowed-link')];
    expect(await resolveWorkspacePath(join(base, 'allowed'), settings(roots))).toBe(join(base, 'allowed'));
    expect(await resolveWorkspacePath(join(base, 'allowed', 'inner'), settings(roots))).toBe(join(base, 'allowed', 'inner'));
    expect(await refusal(join(base, 'project'), roots)).toMatch(/WORKSPACE_ALLOWED_ROOTS/);
    // A sibling whose name merely starts with the root's is not below it.
    mkdirSync(join(base, 'allowed-2'));
    expect(await refusal(join(base, 'allowed-2'), [join(base, 'allowed')])).toMatch(/WORKSPACE_ALLOWED_ROOTS/);
    // A link inside the allowed root that leads out is judged by where it leads.
    symlinkSync(join(base, 'project'), join(base, 'allowed', 'escape'));
    expect(await refusal(join(base, 'allowed', 'escape'), roots)).toMatch(/WORKSPACE_ALLOWED_ROOTS/);
  });

  it.skipIf(process.getuid?.() === 0)('refuses a directory the service cannot read (root reads everything, so skipped as root)', async () => {
    chmodSync(join(base, 'project'), 0o000);
    try {
      expect(await refusal(join(base, 'project'))).toMatch(/not readable/);
    } finally {
      chmodSync(join(base, 'project'), 0o755);
    }
  });
});

describe('CONTRACT §11 registration rules', () => {
  it("refuses the service's own folder, its data folder and its .env, what lies inside them and what holds them", async () => {
    const data = join(base, 'service-data');
    mkdirSync(join(data, 'inner'), { recursive: true });
    writeFileSync(join(data, 'assistant.db'), '');
    const own = settings([], `file:${join(data, 'assistant.db')}`);
    for (const path of [data, join(data, 'inner'), base]) {
      const error = await resolveWorkspacePath(path, own).then(() => null, (thrown: unknown) => thrown);
      expect(error instanceof AppError && error.code === 'WORKSPACE_ERROR' ? error.message : String(error), path).toMatch(/commands must not reach/);
    }
    // The installation (this checkout) and the working directory: the service's code would be
    // writable, and code planted in dist/ runs as the service at its next start.
    for (const path of [process.cwd(), join(process.cwd(), 'src'), join(process.cwd(), 'node_modules')]) {
      expect(await refusal(path), path).toMatch(/commands must not reach/);
    }
    // A sibling of the data folder is an ordinary folder.
    expect(await resolveWorkspacePath(join(base, 'project'), own)).toBe(join(base, 'project'));
  });

  it('refuses /root, /run, /var/lib and the folders that hold them', async () => {
    for (const path of ['/root', '/run', '/var/lib', '/var', '/var/lib/postgresql'].filter((candidate) => existsSyncSafe(candidate))) {
      expect(await refusal(path), path).toMatch(/commands must not reach/);
    }
  });

  it("refuses the service user's home and what holds it, and its hidden folders; a project below home is fine", () => {
    const paths = { guarded: ['/srv/assistant'], guardedIdentities: [], shared: ['/home', '/tmp'], home: '/home/alice' };
    expect(registrationProblem('/home/alice', paths)).toMatch(/home/);
    expect(registrationProblem('/home', paths)).toMatch(/home/);
    expect(registrationProblem('/home/alice/.ssh', paths)).toMatch(/hidden folder/);
    expect(registrationProblem('/home/alice/.config/app', paths)).toMatch(/hidden folder/);
    expect(registrationProblem('/home/alice/projects/app', paths)).toBeNull();
    expect(registrationProblem('/home/alice/projects/.hidden-project', paths)).toBeNull();
    expect(registrationProblem('/home/bob', paths)).toBeNull();
    expect(registrationProblem('/srv', paths)).toMatch(/holds \/srv\/assistant/);
    expect(registrationProblem('/srv/assistant/dist', paths)).toMatch(/lies inside/);
    expect(registrationProblem('/', paths)).toMatch(/root folder/);
    expect(registrationProblem('/lib64', paths)).toMatch(/system folder/);
    expect(registrationProblem('/srv/repo/.git', paths)).toMatch(/\.git folder/);
    expect(registrationProblem('/srv/repo/.git/hooks', paths)).toMatch(/\.git folder/);
  });
});

function existsSyncSafe(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
