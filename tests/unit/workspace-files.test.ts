import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FileToolError,
  listFiles as listWorkspaceFiles,
  readFile as readWorkspaceFile,
  writeFile as writeWorkspaceFile,
} from '../../src/core/workspaces/file-helper/file-operations.mjs';

// The file operations the workspace's file helper runs answer honest mistakes clearly: not with
// `..`, not with an absolute path, not through a symbolic link, not through a link swapped in
// mid-call. (What holds against a race that wins is the helper's sandbox:
// tests/integration/confinement-attacks.test.ts.)

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'workspace-files-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'README.md'), 'hello\n');
  writeFileSync(join(root, 'src', 'a.ts'), 'export {};\n');
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (thrown: unknown) => thrown);
  if (!(error instanceof FileToolError)) throw new Error(`expected a FileToolError, got ${String(error)}`);
  return error.code;
}

describe('confinement', () => {
  it('refuses `..` past the root, absolute paths elsewhere and links that lead out', async () => {
    symlinkSync(outside, join(root, 'out-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'out-file'));
    for (const path of ['../outside/secret.txt', 'src/../../outside/secret.txt', join(outside, 'secret.txt'), '/etc/passwd', 'out-dir/secret.txt', 'out-file']) {
      expect(await codeOf(readWorkspaceFile(root, path)), path).toBe('SECURITY_VIOLATION');
    }
    expect(await codeOf(listWorkspaceFiles(root, 'out-dir'))).toBe('SECURITY_VIOLATION');
    expect(await codeOf(listWorkspaceFiles(root, '..'))).toBe('SECURITY_VIOLATION');
  });

  it('refuses writes that would land outside, also into directories not yet made', async () => {
    symlinkSync(outside, join(root, 'out-dir'));
    symlinkSync(join(outside, 'new.txt'), join(root, 'dangling-out'));
    for (const path of ['../outside/new.txt', 'out-dir/new.txt', 'out-dir/deeper/new.txt', join(outside, 'new.txt'), 'dangling-out', 'dangling-out/x']) {
      expect(await codeOf(writeWorkspaceFile(root, path, 'x')), path).toBe('SECURITY_VIOLATION');
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'deeper'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('follows links that stay inside, and accepts absolute paths inside the root', async () => {
    symlinkSync(join(root, 'src'), join(root, 'src-link'));
    expect((await readWorkspaceFile(root, 'src-link/a.ts')).content).toBe('export {};\n');
    const absolute = await readWorkspaceFile(root, join(root, 'README.md'));
    expect(absolute).toMatchObject({ path: 'README.md', content: 'hello\n', truncated: false });
    // `..` that stays inside is fine; the reply names the real place.
    expect((await readWorkspaceFile(root, 'src/../README.md')).path).toBe('README.md');
  });

  it('a root reached through a link is resolved first', async () => {
    const alias = join(base, 'alias');
    symlinkSync(root, alias);
    expect((await readWorkspaceFile(alias, 'README.md')).content).toBe('hello\n');
    expect(await codeOf(readWorkspaceFile(alias, '../outside/secret.txt'))).toBe('SECURITY_VIOLATION');
  });

  it('a link swapped in between the check and the open is refused, never followed (O_NOFOLLOW)', async () => {
    const target = join(root, 'flip.txt');
    const secret = join(outside, 'secret.txt');
    writeFileSync(target, 'inside');
    // Flip flip.txt between a regular file and a link to the secret on every turn of the event
    // loop, so the swap lands between the helper's awaits: after its realpath check, before its open.
    let flipping = true;
    let asLink = false;
    const flip = () => {
      if (!flipping) return;
      rmSync(target, { force: true });
      try {
        if (asLink) writeFileSync(target, 'inside');
        else symlinkSync(secret, target);
        asLink = !asLink;
      } catch {
        // The helper's O_CREAT re-made the file in the gap; the next turn flips again.
      }
      setImmediate(flip);
    };
    setImmediate(flip);
    const outcomes = new Map<string, number>();
    try {
      for (let attempt = 0; attempt < 2000 && !(outcomes.get('refused-link') ?? 0); attempt++) {
        const outcome = await writeWorkspaceFile(root, 'flip.txt', 'overwritten').then(
          () => 'written',
          (error: unknown) => (error instanceof FileToolError && /Refusing to follow/.test(error.message) ? 'refused-link' : error instanceof FileToolError ? error.code : `crash ${String(error)}`),
        );
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    } finally {
      flipping = false;
    }
    expect(readFileSync(secret, 'utf8')).toBe('top secret');
    expect([...outcomes.keys()].filter((outcome) => outcome.startsWith('crash'))).toEqual([]);
    expect(outcomes.get('refused-link')).toBeGreaterThan(0);
  });
});

describe('reading', () => {
  it('caps the size, flags truncation and never splits a character', async () => {
    writeFileSync(join(root, 'big.txt'), 'é'.repeat(10));
    const read = await readWorkspaceFile(root, 'big.txt', { maxBytes: 5 });
    expect(read).toEqual({ path: 'big.txt', size: 20, content: 'éé', truncated: true });
  });

  it('a missing file is WORKSPACE_ERROR; a directory or a FIFO is refused without hanging', async () => {
    expect(await codeOf(readWorkspaceFile(root, 'nope.txt'))).toBe('WORKSPACE_ERROR');
    expect(await codeOf(readWorkspaceFile(root, 'src'))).toBe('WORKSPACE_ERROR');
    execFileSync('mkfifo', [join(root, 'pipe')]);
    expect(await codeOf(readWorkspaceFile(root, 'pipe'))).toBe('WORKSPACE_ERROR');
  });

  it('a missing workspace directory is WORKSPACE_ERROR', async () => {
    expect(await codeOf(readWorkspaceFile(join(base, 'gone'), 'README.md'))).toBe('WORKSPACE_ERROR');
  });
});

describe('listing', () => {
  it('lists sorted entries with types and file sizes, capped with a truncated flag', async () => {
    symlinkSync('README.md', join(root, 'link'));
    const listing = await listWorkspaceFiles(root);
    expect(listing).toEqual({
      path: '.',
      entries: [
        { name: 'README.md', type: 'file', size: 6 },
        { name: 'link', type: 'symlink' },
        { name: 'src', type: 'directory' },
      ],
      truncated: false,
    });
    const capped = await listWorkspaceFiles(root, '.', { maxEntries: 2 });
    expect(capped.entries.map((entry) => entry.name)).toEqual(['README.md', 'link']);
    expect(capped.truncated).toBe(true);
    expect((await listWorkspaceFiles(root, 'src')).entries).toEqual([{ name: 'a.ts', type: 'file', size: 11 }]);
  });

  it('listing a file or a missing directory is WORKSPACE_ERROR', async () => {
    expect(await codeOf(listWorkspaceFiles(root, 'README.md'))).toBe('WORKSPACE_ERROR');
    expect(await codeOf(listWorkspaceFiles(root, 'nope'))).toBe('WORKSPACE_ERROR');
  });
});

describe('writing', () => {
  it('creates missing parent directories inside the root and reports created / size', async () => {
    const first = await writeWorkspaceFile(root, 'new/deep/file.txt', 'héllo');
    expect(first).toEqual({ path: 'new/deep/file.txt', size: 6, created: true });
    expect(readFileSync(join(root, 'new/deep/file.txt'), 'utf8')).toBe('héllo');
    const second = await writeWorkspaceFile(root, 'new/deep/file.txt', 'x');
    expect(second).toEqual({ path: 'new/deep/file.txt', size: 1, created: false });
    expect(readFileSync(join(root, 'new/deep/file.txt'), 'utf8')).toBe('x');
  });

  it('refuses a file with another hard link (the write would change a file elsewhere) and leaves it intact', async () => {
    linkSync(join(outside, 'secret.txt'), join(root, 'hard.txt'));
    expect(await codeOf(writeWorkspaceFile(root, 'hard.txt', 'x'))).toBe('SECURITY_VIOLATION');
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('refuses the root itself, directories and FIFOs', async () => {
    expect(await codeOf(writeWorkspaceFile(root, '.', 'x'))).toBe('WORKSPACE_ERROR');
    expect(await codeOf(writeWorkspaceFile(root, 'src', 'x'))).toBe('WORKSPACE_ERROR');
    execFileSync('mkfifo', [join(root, 'pipe')]);
    expect(await codeOf(writeWorkspaceFile(root, 'pipe', 'x'))).toBe('WORKSPACE_ERROR');
  });

  it("refuses anything inside a repository's .git, where config and hooks make Git run programs", async () => {
    mkdirSync(join(root, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(root, '.git', 'config'), '[core]\n');
    for (const path of ['.git/config', '.git/hooks/pre-commit', 'src/../.git/info/attributes', 'vendor/lib/.git/config']) {
      expect(await codeOf(writeWorkspaceFile(root, path, '[filter "x"]\n'))).toBe('SECURITY_VIOLATION');
    }
    expect(readFileSync(join(root, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect((await writeWorkspaceFile(root, 'docs/.gitignore', 'x')).created).toBe(true);
  });

  it('a file in the way of a parent directory is WORKSPACE_ERROR', async () => {
    expect(await codeOf(writeWorkspaceFile(root, 'README.md/child.txt', 'x'))).toBe('WORKSPACE_ERROR');
  });
});
