import { recordAudit } from '../audit/record-audit.js';
import type { Store } from '../db/store.js';

export type ModelAuditAction = 'download' | 'downloaded' | 'download_failed' | 'switch' | 'default' | 'delete';

/** Who to record: the caller, or for a background pull's outcome the caller who started it. */
export interface ModelAuditActor {
  userId: string;
  ip: string;
}

/** An audit entry of type `model`; details name models and providers only, never a key. */
export async function auditModel(
  store: Store,
  actor: ModelAuditActor,
  action: ModelAuditAction,
  details: Record<string, unknown>,
): Promise<void> {
  await recordAudit(store, { type: 'model', userId: actor.userId, ip: actor.ip, details: { action, ...details } });
}
