import { lstatSync, mkdirSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

// A repository's `.git` holds files Git reads as configuration or runs as programs. Anyone who
// may write the workspace may write them, and what they plant would run for the next person who
// uses Git there (CONTRACT §11, "Git metadata"). Inside every sandbox those entries are bound
// read-only onto themselves; a mount point can be neither written, removed nor renamed.

/** Entries of `.git` that Git reads as configuration, or that name other repositories or work trees. */
const PROTECTED_ENTRIES = ['config', 'config.worktree', 'commondir', 'hooks', 'info', 'worktrees'];

/**
 * Folders made empty when a repository lacks them, so they can be protected: Git's own `init`
 * makes both, and an empty one changes nothing. Files are never made: a read-only bind onto a
 * missing `commondir` would create an empty one in the real repository, which breaks Git.
 */
const MADE_WHEN_MISSING = ['hooks', 'info'];

/** Submodules keep a `.git` of their own under `modules/`, nested for nested submodules. */
const MAX_MODULE_DEPTH = 3;

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Read-only binds for the entries of one git directory that exist as real files or folders. A
 * symbolic link cannot be protected by a mount (mounting follows it), so such an entry is left
 * as it is; the service's own Git calls ignore hooks and configuration programs regardless.
 */
function protectGitDirectory(gitDir: string, depth: number): string[] {
  const args: string[] = [];
  for (const name of PROTECTED_ENTRIES) {
    const path = join(gitDir, name);
    let info = lstatOrNull(path);
    if (info === null && depth === 0 && MADE_WHEN_MISSING.includes(name)) {
      try {
        mkdirSync(path);
      } catch {
        // Made meanwhile by someone else, or not ours to change: looked at again below.
      }
      info = lstatOrNull(path);
    }
    if (info !== null && (info.isFile() || info.isDirectory())) args.push('--ro-bind', path, path);
  }
  if (depth >= MAX_MODULE_DEPTH) return args;
  const modules = join(gitDir, 'modules');
  if (lstatOrNull(modules)?.isDirectory() !== true) return args;
  let names: string[];
  try {
    names = readdirSync(modules);
  } catch {
    return args;
  }
  for (const name of names) {
    const nested = join(modules, name);
    if (lstatOrNull(nested)?.isDirectory() === true) args.push(...protectGitDirectory(nested, depth + 1));
  }
  return args;
}

/**
 * bubblewrap arguments protecting a workspace's repository: `.git` itself is pinned (bound onto
 * itself, so it cannot be renamed and replaced by one of a command's making), then its protected
 * entries bound read-only. A `.git` that is a file or a link binds nothing: such a repository
 * points outside its workspace, and the service refuses to run Git in it.
 */
export function gitProtectionArguments(workspace: string): string[] {
  const gitDir = join(workspace, '.git');
  if (lstatOrNull(gitDir)?.isDirectory() !== true) return [];
  return ['--bind', gitDir, gitDir, ...protectGitDirectory(gitDir, 0)];
}
