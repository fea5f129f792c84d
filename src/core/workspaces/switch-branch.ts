import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { branchNameProblem } from './branch-name.js';
import { requireWorkspace } from './find-workspace.js';
import { gitFor, gitMessage, inWorkspaceGit } from './git-client.js';
import { readGitState, requireWorkTree } from './git-state.js';
import type { Actor } from '../auth/actor.js';
import { auditWorkspace } from './workspace-audit.js';
import { gitStateColumns } from './workspace-view.js';

/**
 * Checks out an existing local branch of the workspace and returns its name. Never creates a
 * branch and never guesses one from a remote: the name must already be `refs/heads/<name>`.
 * A checkout Git refuses (local changes in the way, the branch checked out in another worktree)
 * is a WORKSPACE_ERROR carrying Git's own message, which names the files or the worktree.
 */
export async function switchBranch(store: Store, actor: Actor, workspaceId: string, branchName: string): Promise<string> {
  // The input schema refuses bad names first (400 INVALID_REQUEST); this repeats the check so
  // the function is safe for any caller, since the name ends up on a Git command line.
  const problem = branchNameProblem(branchName);
  if (problem) throw AppError.invalid(`Invalid branch name: ${problem}`);
  const workspace = await requireWorkspace(store, workspaceId);
  const git = await inWorkspaceGit(() => requireWorkTree(workspace.path));
  const tip = await inWorkspaceGit(() => git.raw(['rev-parse', '--verify', '--quiet', `refs/heads/${branchName}`]));
  if (tip.trim() === '') throw new AppError('WORKSPACE_ERROR', `Unknown branch: ${branchName}`);
  const from = (await readGitState(workspace.path)).branch;
  // The only Git call that writes: confined, it may change the repository's own folder alone.
  const topLevel = (await inWorkspaceGit(() => git.raw(['rev-parse', '--show-toplevel']))).trim();
  const writer = await gitFor(workspace.path, { writable: topLevel });
  try {
    // `--` ends option parsing, so even a name that slipped past the check could not be an option.
    await writer.raw(['switch', '--no-guess', '--', branchName]);
  } catch (error) {
    throw new AppError('WORKSPACE_ERROR', gitMessage(error), { details: { branch: branchName } });
  }
  await auditWorkspace(store, actor, 'branch_switched', { workspaceId: workspace.id, from, to: branchName });
  await store.db.workspace.updateMany({ where: { id: workspace.id }, data: gitStateColumns(await readGitState(workspace.path)) });
  return branchName;
}
