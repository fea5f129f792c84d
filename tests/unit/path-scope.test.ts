import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  absolutePath, locatePath, patternDirectory, protectedByRemoval, protectedByRemovingEntries, resolveRealPath, type PathPolicy,
} from '../../src/core/security/path-scope.js';

let base = '';
let workspace = '';
let home = '';
let policy: PathPolicy;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join('/var/tmp', 'risk-fixture-')));
  workspace = join(base, 'w');
  home = join(base, 'home');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(home);
  symlinkSync('/etc', join(workspace, 'etc-link'));
  symlinkSync('/dev/null', join(workspace, 'null-link'));
  policy = { workspaceRoots: [workspace], home, resolve: resolveRealPath };
});

afterAll(() => {
  if (base !== '') rmSync(base, { recursive: true, force: true });
});

describe('absolutePath', () => {
  it('joins relative text to the cwd and keeps `..` for the resolver', () => {
    expect(absolutePath('a/../b', '/w')).toBe('/w/a/../b');
    expect(absolutePath('/etc/hosts', null)).toBe('/etc/hosts');
    expect(absolutePath('', '/w')).toBe('/w');
  });

  it('cannot place a relative path without a cwd', () => {
    expect(absolutePath('x', null)).toBeNull();
  });
});

describe('patternDirectory', () => {
  it.each([
    ['*.ts', 0, '.'],
    ['/etc/*.conf', 5, '/etc/'],
    ['../*', 3, '../'],
    ['src/a*', 5, 'src/'],
    ['/*', 1, '/'],
  ])('%s → %s', (text, glob, directory) => {
    expect(patternDirectory(text, glob)).toBe(directory);
  });
});

describe('resolveRealPath', () => {
  it('follows symlinks', () => {
    expect(resolveRealPath(join(workspace, 'etc-link', 'hosts'))).toBe('/etc/hosts');
  });

  it('applies `..` after the symlink before it, as the kernel does', () => {
    expect(resolveRealPath(join(workspace, 'etc-link') + '/../etc/shadow')).toBe('/etc/shadow');
    expect(resolveRealPath(`${workspace}/src/../src`)).toBe(join(workspace, 'src'));
  });

  it('keeps the part that does not exist yet', () => {
    expect(resolveRealPath(`${workspace}/new/dir/../file`)).toBe(join(workspace, 'new', 'file'));
    expect(resolveRealPath('/definitely-not-there/x')).toBe('/definitely-not-there/x');
  });
});

describe('locatePath', () => {
  it.each([
    ['a workspace file', () => join(workspace, 'src', 'a.ts'), 'inside'],
    ['the workspace root', () => workspace, 'inside'],
    ['a symlink out of the workspace', () => join(workspace, 'etc-link', 'passwd'), 'outside'],
    ['/tmp', () => '/tmp/x', 'tmp'],
    ['/dev/null', () => '/dev/null', 'special'],
    ['/dev/stdout (a link into /proc)', () => '/dev/stdout', 'special'],
    ['/dev/fd/3', () => '/dev/fd/3', 'special'],
    ['a workspace link to /dev/null', () => join(workspace, 'null-link'), 'special'],
    ['/dev/tcp/…', () => '/dev/tcp/example.com/80', 'network'],
    ['/dev/sda', () => '/dev/sda', 'device'],
    ['/dev/mem', () => '/dev/mem', 'device'],
    ['home', () => home, 'outside'],
    ['/etc/hosts', () => '/etc/hosts', 'outside'],
  ])('%s is %s', (_name, path, zone) => {
    expect(locatePath(path(), policy).zone).toBe(zone);
  });

  it('tells block devices apart from other devices', () => {
    expect(['/dev/sda', '/dev/nvme0n1', '/dev/mapper/root', '/dev/disk/by-id/x', '/dev/loop0', '/dev/mmcblk0'].map((path) => locatePath(path, policy).blockDevice))
      .toEqual([true, true, true, true, true, true]);
    expect(locatePath('/dev/mem', policy).blockDevice).toBe(false);
  });
});

describe('protected removals', () => {
  it('protects /, home, workspace roots and their parents', () => {
    expect(protectedByRemoval('/', policy)).toBe('root');
    expect(protectedByRemoval(home, policy)).toBe('home');
    expect(protectedByRemoval(workspace, policy)).toBe('workspace');
    expect(protectedByRemoval(base, policy)).toBe('workspace');
    expect(protectedByRemoval(join(workspace, 'src'), policy)).toBeNull();
    expect(protectedByRemoval('/etc', policy)).toBeNull();
  });

  it('judges a pattern by the entries it can match', () => {
    expect(protectedByRemovingEntries('/', policy)).toBe('root');
    expect(protectedByRemovingEntries(base, policy)).toBe('workspace');
    expect(protectedByRemovingEntries(home, policy)).toBe('home');
    expect(protectedByRemovingEntries(workspace, policy)).toBeNull();
  });

  it('stops protecting home once the line changed HOME', () => {
    expect(protectedByRemoval(home, { ...policy, home: null })).toBeNull();
  });
});
