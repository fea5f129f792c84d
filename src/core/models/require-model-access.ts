import { recordAudit } from '../audit/record-audit.js';
import type { ProviderName } from '../config/env-schema.js';
import type { Store } from '../db/store.js';
import { checkModelAccess, type ModelAccess } from '../usage/model-access.js';
import type { ModelAuditActor } from './model-audit.js';

/**
 * 403 FORBIDDEN naming the model when the caller's roles may not use it (CONTRACT §13), audited
 * as an `access` denial like a missing permission, so a refused choice is visible to auditors.
 * Every place that chooses a model calls it after the model is known and before anything is
 * stored or sent to a provider.
 */
export async function requireModelAccess(
  store: Store,
  actor: ModelAuditActor,
  access: ModelAccess,
  chosen: { provider: ProviderName; model: string },
): Promise<void> {
  if (access.allows(chosen.provider, chosen.model)) return;
  await recordAudit(store, {
    type: 'access',
    userId: actor.userId,
    ip: actor.ip,
    details: { action: 'denied', model: `${chosen.provider}/${chosen.model}` },
  });
  checkModelAccess(access, chosen.provider, chosen.model);
}
