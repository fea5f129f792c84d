import { stat } from 'node:fs/promises';
import type { SimpleGit, StatusResult } from 'simple-git';
import { AppError } from '../errors/app-error.js';
import { gitFor, gitMessage } from './git-client.js';
import { noChanges, type GitState, type WorkspaceChanges } from './workspace-view.js';

export type DirectoryPresence = 'present' | 'missing' | 'unreadable';

/** The cheap check the list runs instead of Git: is the registered path still a directory? */
export async function directoryPresence(path: string): Promise<DirectoryPresence> {
  try {
    return (await stat(path)).isDirectory() ? 'present' : 'missing';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'missing' : 'unreadable';
  }
}

/**
 * Whether the directory lies inside a Git work tree. A subdirectory of a repository counts (it is
 * inside the work tree, and Git commands run there act on that repository); a `.git` directory or
 * a bare repository answers "false" and counts as not_git, as does "not a git repository".
 * Any other failure is thrown.
 */
export async function isInsideWorkTree(git: SimpleGit): Promise<boolean> {
  try {
    return (await git.raw(['rev-parse', '--is-inside-work-tree'])).trim() === 'true';
  } catch (error) {
    if (/not a git repository/i.test(gitMessage(error))) return false;
    throw error;
  }
}

/**
 * A Git client for a workspace that must be a work tree (branches, switch-branch): a missing
 * directory or one outside any repository is the client's problem, 400 WORKSPACE_ERROR.
 */
export async function requireWorkTree(path: string): Promise<SimpleGit> {
  const presence = await directoryPresence(path);
  if (presence !== 'present') throw new AppError('WORKSPACE_ERROR', `Workspace directory is ${presence}: ${path}`);
  const git = await gitFor(path);
  if (!(await isInsideWorkTree(git))) throw new AppError('WORKSPACE_ERROR', `Workspace is not a Git repository: ${path}`);
  return git;
}

/**
 * Porcelain XY codes counted once per file: `?` untracked, an `A` in the index added, a `D` on
 * either side deleted, everything else (M, R, C, T, and unmerged U) modified. The counts cover the
 * whole repository, also when the workspace is one of its subdirectories.
 */
export function countChanges(files: StatusResult['files']): WorkspaceChanges {
  const changes = { ...noChanges };
  for (const file of files) {
    if (file.index === '?') changes.untracked++;
    else if (file.index === '!') continue;
    else if (file.index === 'A') changes.added++;
    else if (file.index === 'D' || file.working_dir === 'D') changes.deleted++;
    else changes.modified++;
  }
  return changes;
}

const notRepository = (status: 'missing' | 'not_git' | 'error'): GitState => ({
  status,
  branch: '',
  changes: { ...noChanges },
  ahead: 0,
  behind: 0,
});

/**
 * Branch, status, changes and ahead/behind of a workspace, never throwing: a broken repository is
 * status `error`, so one bad workspace cannot fail a refresh of all of them.
 *
 * A detached HEAD reports branch "HEAD" (what `git status` itself prints): Git refuses "HEAD" as a
 * branch name, so it can never be mistaken for a real branch, and it costs no extra Git call.
 * An unborn branch (a repository with no commits yet) reports its name.
 */
export async function readGitState(path: string): Promise<GitState> {
  const presence = await directoryPresence(path);
  if (presence !== 'present') return notRepository(presence === 'missing' ? 'missing' : 'error');
  try {
    const git = await gitFor(path);
    if (!(await isInsideWorkTree(git))) return notRepository('not_git');
    const status = await git.status();
    const changes = countChanges(status.files);
    const dirty = Object.values(changes).some((count) => count > 0);
    return {
      status: dirty ? 'dirty' : 'clean',
      branch: status.detached ? 'HEAD' : (status.current ?? ''),
      changes,
      ahead: status.tracking ? status.ahead : 0,
      behind: status.tracking ? status.behind : 0,
    };
  } catch {
    return notRepository('error');
  }
}
