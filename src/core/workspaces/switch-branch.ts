import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { branchNameProblem } from './branch-name.js';
import { gitMessage, inWorkspaceGit, runGit } from './confined-git.js';
import { requireWorkspace } from './find-workspace.js';
import { readGitState, requireRepository } from './git-state.js';
import type { Actor } from '../auth/actor.js';
import { auditWorkspace } from './workspace-audit.js';
import { gitStateColumns } from './workspace-view.js';

/**
 * Checks out an existing local branch of the workspace and returns its name. Never creates a
 * branch and never guesses one from a remote: the name must already be `refs/heads/<name>`.
 * A checkout Git refuses (local changes in the way, the branch checked out in another worktree)
 * is a WORKSPACE_ERROR carrying Git's own message, which names the files or the worktree.
 */
export async function switchBranch(store: Store, config: Pick<Config, 'DATABASE_URL'>, actor: Actor, workspaceId: string, branchName: string): Promise<string> {
  // The input schema refuses bad names first (400 INVALID_REQUEST); this repeats the check so
  // the function is safe for any caller, since the name ends up on a Git command line.
  const problem = branchNameProblem(branchName);
  if (problem) throw AppError.invalid(`Invalid branch name: ${problem}`);
  const workspace = await requireWorkspace(store, workspaceId);
  await requireRepository(store, config, workspace);
  // --quiet: an unknown branch prints nothing and exits 1, which is no failure of Git's.
  const tip = await inWorkspaceGit(() => runGit(workspace, ['rev-parse', '--verify', '--quiet', `refs/heads/${branchName}`]).catch(() => ''));
  if (tip.trim() === '') throw new AppError('WORKSPACE_ERROR', `Unknown branch: ${branchName}`);
  const from = (await readGitState(store, config, workspace)).branch;
  try {
    // The only Git call that writes: confined, it may change the registered folder alone, never
    // a folder the repository names. `--` ends option parsing, so even a name that slipped past
    // the check could not be an option.
    await runGit(workspace, ['switch', '--no-guess', '--no-recurse-submodules', '--', branchName], { writable: true });
  } catch (error) {
    throw new AppError('WORKSPACE_ERROR', gitMessage(error), { details: { branch: branchName } });
  }
  await auditWorkspace(store, actor, 'branch_switched', { workspaceId: workspace.id, from, to: branchName });
  await store.db.workspace.updateMany({ where: { id: workspace.id }, data: gitStateColumns(await readGitState(store, config, workspace)) });
  return branchName;
}
