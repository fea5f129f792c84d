import { lstat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { Workspace } from '../../generated/sqlite/client.js';
import type { Store } from '../db/store.js';
import type { Config } from '../config/load-config.js';
import { registrationProblem, servicePaths } from './workspace-rules.js';

// A registered workspace must still be what was registered whenever it is used (CONTRACT §11):
// the same directory (device and inode, not a link) and still allowed by the registration rules;
// otherwise it turns `error` and nothing runs in it: no terminal binds it, no tool acts on it.
// A repository must also be one whose Git metadata cannot point Git outside it; otherwise the
// service runs no Git in it (status `error`), though commands and tools may still work there.
// Only metadata is read here (lstat), never the content of a workspace's file.

/** `.git` entries that send Git elsewhere; present at registration is fine, appearing later is not. */
export const REDIRECTING_GIT_ENTRIES = ['commondir', 'config.worktree', 'worktrees'] as const;

export type WorkspaceRecord = Pick<Workspace, 'id' | 'path' | 'device' | 'inode' | 'gitEntries'>;

export type WorkspaceCheck =
  | {
      ok: true;
      /** `none`: not a repository; `tampered`: its Git metadata points outside (`gitProblem` says how). */
      repository: 'none' | 'intact' | 'tampered';
      gitProblem?: string;
    }
  | { ok: false; status: 'missing' | 'error'; reason: string };

async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch {
    return null;
  }
}

/** The identity stored for a directory: its device and inode as decimal strings. */
export function identityColumns(info: { dev: number | bigint; ino: number | bigint }): { device: string; inode: string } {
  return { device: String(info.dev), inode: String(info.ino) };
}

/** Which redirecting entries a repository's `.git` holds now, stored at registration. */
export async function presentGitEntries(path: string): Promise<string> {
  const present: string[] = [];
  for (const name of REDIRECTING_GIT_ENTRIES) if ((await lstatOrNull(join(path, '.git', name))) !== null) present.push(name);
  return present.join(',');
}

/** Whether some folder above lies in a Git work tree: its repository would be outside the workspace. */
async function insideOuterRepository(path: string): Promise<boolean> {
  for (let folder = dirname(path); ; folder = dirname(folder)) {
    if ((await lstatOrNull(join(folder, '.git'))) !== null) return true;
    if (folder === sep) return false;
  }
}

async function gitLayout(workspace: WorkspaceRecord): Promise<{ repository: 'none' | 'intact' } | { repository: 'tampered'; gitProblem: string }> {
  const gitDir = join(workspace.path, '.git');
  const info = await lstatOrNull(gitDir);
  if (info === null) {
    if (!(await insideOuterRepository(workspace.path))) return { repository: 'none' };
    return { repository: 'tampered', gitProblem: 'the workspace lies inside a repository whose .git is outside it' };
  }
  if (!info.isDirectory()) return { repository: 'tampered', gitProblem: '.git is a file or a link, which points Git outside the workspace' };
  const known = new Set((workspace.gitEntries ?? '').split(',').filter((name) => name !== ''));
  for (const name of REDIRECTING_GIT_ENTRIES) {
    if (!known.has(name) && (await lstatOrNull(join(gitDir, name))) !== null) {
      return { repository: 'tampered', gitProblem: `.git/${name} appeared after the workspace was registered` };
    }
  }
  return { repository: 'intact' };
}

/**
 * Checks a workspace before use. A row registered before identities were kept gets its identity
 * recorded now (the first use vouches for it, as registration would have).
 */
export async function checkWorkspace(store: Store, config: Pick<Config, 'DATABASE_URL'>, workspace: WorkspaceRecord): Promise<WorkspaceCheck> {
  const info = await lstatOrNull(workspace.path);
  if (info === null) return { ok: false, status: 'missing', reason: `the folder ${workspace.path} is missing` };
  if (info.isSymbolicLink()) return { ok: false, status: 'error', reason: `${workspace.path} was replaced by a link` };
  if (!info.isDirectory()) return { ok: false, status: 'error', reason: `${workspace.path} is no longer a directory` };
  const identity = identityColumns(info);
  if (workspace.device === null || workspace.inode === null) {
    await store.db.workspace.updateMany({ where: { id: workspace.id }, data: identity });
  } else if (workspace.device !== identity.device || workspace.inode !== identity.inode) {
    return { ok: false, status: 'error', reason: `${workspace.path} is not the directory that was registered (it was replaced)` };
  }
  const rule = registrationProblem(workspace.path, servicePaths(config));
  if (rule !== null) return { ok: false, status: 'error', reason: rule };
  return { ok: true, ...(await gitLayout(workspace)) };
}
