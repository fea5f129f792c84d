import type { Store } from '../db/store.js';
import { findActiveWorkspaceId } from './active-workspace.js';
import { directoryPresence } from './git-state.js';
import { toWorkspaceView, type WorkspaceView } from './workspace-view.js';

/**
 * Every registered workspace in registration order, with the stored Git state of its last
 * refresh. Only a stat runs per workspace (no Git), so listing stays cheap: a path that has
 * vanished is reported `missing` at once, everything else waits for a refresh.
 */
export async function listWorkspaces(store: Store, userId: string): Promise<WorkspaceView[]> {
  const [workspaces, activeId] = await Promise.all([
    store.db.workspace.findMany({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    findActiveWorkspaceId(store, userId),
  ]);
  const presence = await Promise.all(workspaces.map((workspace) => directoryPresence(workspace.path)));
  return workspaces.map((workspace, index) => toWorkspaceView(workspace, activeId, presence[index] === 'missing'));
}
