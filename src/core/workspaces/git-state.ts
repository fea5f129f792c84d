import { stat } from 'node:fs/promises';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { runGit } from './confined-git.js';
import { checkWorkspace, type WorkspaceRecord } from './workspace-integrity.js';
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
 * A workspace that Git may run in (branches, switch-branch): intact (workspace-integrity.ts) and
 * a repository of its own; anything else is the client's problem, 400 WORKSPACE_ERROR.
 */
export async function requireRepository(store: Store, config: Pick<Config, 'DATABASE_URL'>, workspace: WorkspaceRecord): Promise<void> {
  const check = await checkWorkspace(store, config, workspace);
  if (!check.ok) throw new AppError('WORKSPACE_ERROR', `Workspace is ${check.status}: ${check.reason}`, { details: { status: check.status } });
  if (check.repository === 'none') throw new AppError('WORKSPACE_ERROR', `Workspace is not a Git repository: ${workspace.path}`);
  if (check.repository === 'tampered') {
    throw new AppError('WORKSPACE_ERROR', `Git is not run in this workspace: ${check.gitProblem ?? 'its repository points outside it'}`, { details: { status: 'error' } });
  }
}

/**
 * Porcelain XY codes counted once per file: `?` untracked, an `A` in the index added, a `D` on
 * either side deleted, everything else (M, R, C, T, and unmerged) modified.
 */
function countEntry(changes: WorkspaceChanges, x: string, y: string): void {
  if (x === '?') changes.untracked++;
  else if (x === 'A') changes.added++;
  else if (x === 'D' || y === 'D') changes.deleted++;
  else changes.modified++;
}

/**
 * `git status --porcelain=v2 --branch -z`: headers `# branch.head|upstream|ab …`, then one
 * NUL-ended record per path (a rename's record is followed by its original path, skipped here).
 */
export function parseStatus(output: string): Omit<GitState, 'status'> & { dirty: boolean } {
  const changes = { ...noChanges };
  let branch = '';
  let upstream = false;
  let ahead = 0;
  let behind = 0;
  const records = output.split('\0');
  for (let index = 0; index < records.length; index++) {
    const record = records[index] ?? '';
    if (record.startsWith('# branch.head ')) {
      const head = record.slice('# branch.head '.length);
      // A detached HEAD is reported "HEAD", as `git status` itself says: Git refuses that as a
      // branch name, so it is never mistaken for one.
      branch = head === '(detached)' ? 'HEAD' : head;
    } else if (record.startsWith('# branch.upstream ')) {
      upstream = true;
    } else if (record.startsWith('# branch.ab ')) {
      const match = /^# branch\.ab \+(\d+) -(\d+)$/.exec(record);
      ahead = Number(match?.[1] ?? 0);
      behind = Number(match?.[2] ?? 0);
    } else if (record.startsWith('? ')) {
      countEntry(changes, '?', '?');
    } else if (/^[12u] /.test(record)) {
      countEntry(changes, record[2] ?? '.', record[3] ?? '.');
      if (record.startsWith('2 ')) index++;
    }
  }
  const dirty = Object.values(changes).some((count) => count > 0);
  return { branch, changes, ahead: upstream ? ahead : 0, behind: upstream ? behind : 0, dirty };
}

const notRepository = (status: 'missing' | 'not_git' | 'error'): GitState => ({
  status,
  branch: '',
  changes: { ...noChanges },
  ahead: 0,
  behind: 0,
});

/**
 * Branch, status, changes and ahead/behind of a workspace, never throwing: a broken or
 * tampered repository is status `error`, so one bad workspace cannot fail a refresh of all.
 */
export async function readGitState(store: Store, config: Pick<Config, 'DATABASE_URL'>, workspace: WorkspaceRecord): Promise<GitState> {
  const check = await checkWorkspace(store, config, workspace);
  if (!check.ok) return notRepository(check.status);
  if (check.repository === 'none') return notRepository('not_git');
  if (check.repository === 'tampered') return notRepository('error');
  try {
    const { dirty, ...state } = parseStatus(await runGit(workspace, ['status', '--porcelain=v2', '--branch', '-z', '--ignore-submodules=all']));
    return { status: dirty ? 'dirty' : 'clean', ...state };
  } catch {
    return notRepository('error');
  }
}
