import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { requireWorkspace } from './find-workspace.js';
import type { Actor } from '../auth/actor.js';
import { auditWorkspace } from './workspace-audit.js';

/** Whether a live terminal runs in a directory or below it (the terminal manager answers). */
export type LiveTerminalCheck = (directory: string) => boolean;

/**
 * Unregisters a workspace. Nothing on disk is touched. Users who had it active fall back to the
 * first registered workspace. Refused while a terminal runs inside it, since that shell would
 * keep working in a directory the service no longer counts as a workspace.
 */
export async function deleteWorkspace(
  store: Store,
  hasLiveTerminalUnder: LiveTerminalCheck,
  actor: Actor,
  workspaceId: string,
): Promise<{ path: string }> {
  const workspace = await requireWorkspace(store, workspaceId);
  if (hasLiveTerminalUnder(workspace.path)) {
    throw new AppError('WORKSPACE_ERROR', 'A terminal is running inside this workspace; close it first', {
      details: { reason: 'terminal_running' },
    });
  }
  const [, removed] = await store.db.$transaction([
    store.db.userState.updateMany({ where: { activeWorkspaceId: workspace.id }, data: { activeWorkspaceId: null } }),
    store.db.workspace.deleteMany({ where: { id: workspace.id } }),
  ]);
  if (removed.count === 0) throw AppError.notFound('Workspace');
  await auditWorkspace(store, actor, 'deleted', { workspaceId: workspace.id, name: workspace.name, path: workspace.path });
  return { path: workspace.path };
}
