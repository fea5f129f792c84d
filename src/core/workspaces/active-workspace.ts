import type { Workspace } from '../../generated/sqlite/client.js';
import type { Store } from '../db/store.js';

export interface WorkspaceRef {
  id: string;
  name: string;
  path: string;
  branch: string;
  status: string;
  /** The identity checked at every use (workspace-integrity.ts). */
  device: string | null;
  inode: string | null;
  gitEntries: string | null;
}

/** The caller's active workspace; a user who never chose one uses the first registered (CONTRACT §5). */
export async function findActiveWorkspace(store: Store, userId: string): Promise<Workspace | null> {
  const state = await store.db.userState.findUnique({ where: { userId } });
  if (state?.activeWorkspaceId) {
    const chosen = await store.db.workspace.findUnique({ where: { id: state.activeWorkspaceId } });
    if (chosen) return chosen;
  }
  return store.db.workspace.findFirst({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

export function toWorkspaceRef(workspace: Workspace): WorkspaceRef {
  const { id, name, path, branch, status, device, inode, gitEntries } = workspace;
  return { id, name, path, branch, status, device, inode, gitEntries };
}

/** The id of the caller's active workspace, for the `active` flag of the workspace objects. */
export async function findActiveWorkspaceId(store: Store, userId: string): Promise<string | null> {
  return (await findActiveWorkspace(store, userId))?.id ?? null;
}
