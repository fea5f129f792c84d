import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors/app-error.js';
import { isSystemPath, resolveWorkspacePath } from '../../src/core/workspaces/workspace-path.js';

// Which directories may become a workspace (CONTRACT §1 WORKSPACE_ALLOWED_ROOTS, §2 WORKSPACE_ERROR).

let base: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'workspace-path-')));
  mkdirSync(join(base, 'project'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

async function refusal(path: string, roots: string[] = []): Promise<string> {
  const error = await resolveWorkspacePath(path, roots).then(() => null, (thrown: unknown) => thrown);
  if (!(error instanceof AppError) || error.code !== 'WORKSPACE_ERROR') throw new Error(`expected WORKSPACE_ERROR for ${path}, got ${String(error)}`);
  return error.message;
}

describe('resolveWorkspacePath', () => {
  it('returns the real path of an existing directory, whatever the spelling', async () => {
    symlinkSync(join(base, 'project'), join(base, 'alias'));
    expect(await resolveWorkspacePath(join(base, 'project'), [])).toBe(join(base, 'project'));
    expect(await resolveWorkspacePath(join(base, 'alias'), [])).toBe(join(base, 'project'));
    expect(await resolveWorkspacePath(`${base}/project/../project/`, [])).toBe(join(base, 'project'));
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
    expect(await resolveWorkspacePath(join(base, 'allowed'), roots)).toBe(join(base, 'allowed'));
    expect(await resolveWorkspacePath(join(base, 'allowed', 'inner'), roots)).toBe(join(base, 'allowed', 'inner'));
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
