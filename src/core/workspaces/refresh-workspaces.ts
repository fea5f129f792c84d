import type { Workspace } from '../../generated/sqlite/client.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { findActiveWorkspaceId } from './active-workspace.js';
import { requireWorkspace } from './find-workspace.js';
import { readGitState } from './git-state.js';
import { gitStateColumns, toWorkspaceView, type WorkspaceView } from './workspace-view.js';

/** Git processes a refresh-all runs at once: enough to overlap disk waits, few enough for a small host. */
const REFRESH_CONCURRENCY = 4;

/**
 * Recomputes and stores one workspace's Git state. Returns null when the workspace was deleted
 * meanwhile (updateMany, so a concurrent delete is not an error here).
 */
async function refreshOne(store: Store, config: Pick<Config, 'DATABASE_URL'>, workspace: Workspace): Promise<Workspace | null> {
  const columns = gitStateColumns(await readGitState(store, config, workspace));
  const { count } = await store.db.workspace.updateMany({ where: { id: workspace.id }, data: columns });
  return count === 0 ? null : { ...workspace, ...columns };
}

/** One workspace. A broken repository still answers, with status `error`. */
export async function refreshWorkspace(store: Store, config: Pick<Config, 'DATABASE_URL'>, userId: string, workspaceId: string): Promise<WorkspaceView> {
  const refreshed = await refreshOne(store, config, await requireWorkspace(store, workspaceId));
  if (!refreshed) throw AppError.notFound('Workspace');
  return toWorkspaceView(refreshed, await findActiveWorkspaceId(store, userId));
}

/**
 * Refreshes and stores every workspace, in registration order, never failing for one
 * workspace's sake; the deleted-meanwhile ones are left out. Also the periodic job's work.
 */
export async function refreshStoredWorkspaces(store: Store, config: Pick<Config, 'DATABASE_URL'>): Promise<Workspace[]> {
  const workspaces = await store.db.workspace.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const refreshed: (Workspace | null)[] = new Array<Workspace | null>(workspaces.length).fill(null);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < workspaces.length; index = next++) {
      const workspace = workspaces[index];
      if (workspace) refreshed[index] = await refreshOne(store, config, workspace);
    }
  };
  await Promise.all(Array.from({ length: REFRESH_CONCURRENCY }, worker));
  return refreshed.flatMap((workspace) => (workspace ? [workspace] : []));
}

/** Every workspace, as the caller sees them (`active`). */
export async function refreshAllWorkspaces(store: Store, config: Pick<Config, 'DATABASE_URL'>, userId: string): Promise<WorkspaceView[]> {
  const refreshed = await refreshStoredWorkspaces(store, config);
  const activeId = await findActiveWorkspaceId(store, userId);
  return refreshed.map((workspace) => toWorkspaceView(workspace, activeId));
}
