import type { Store } from '../db/store.js';
import { requireWorkspace } from './find-workspace.js';
import type { Actor } from '../auth/actor.js';
import { auditWorkspace } from './workspace-audit.js';
import { toWorkspaceView, type WorkspaceView } from './workspace-view.js';

/** Makes a workspace the caller's active one; other users keep theirs (CONTRACT §0). */
export async function switchWorkspace(store: Store, actor: Actor, workspaceId: string): Promise<WorkspaceView> {
  const workspace = await requireWorkspace(store, workspaceId);
  await store.db.userState.upsert({
    where: { userId: actor.user.id },
    create: { userId: actor.user.id, activeWorkspaceId: workspace.id },
    update: { activeWorkspaceId: workspace.id },
  });
  await auditWorkspace(store, actor, 'switched', { workspaceId: workspace.id, name: workspace.name });
  return toWorkspaceView(workspace, workspace.id);
}
