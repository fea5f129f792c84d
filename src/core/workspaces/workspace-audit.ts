import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { Store } from '../db/store.js';

export type WorkspaceAction = 'added' | 'switched' | 'deleted' | 'branch_switched';

export async function auditWorkspace(
  store: Store,
  actor: Actor,
  action: WorkspaceAction,
  details: Record<string, unknown>,
): Promise<void> {
  await recordAudit(store, { type: 'workspace', userId: actor.user.id, ip: actor.ip, details: { action, ...details } });
}
