import type { Prisma } from '../../generated/sqlite/client.js';
import { newId } from '../ids.js';
import type { Store } from '../db/store.js';

export const auditTypes = ['command', 'auth', 'access', 'role', 'model', 'terminal', 'workspace'] as const;
export type AuditType = (typeof auditTypes)[number];

export interface AuditEvent {
  type: AuditType;
  userId: string;
  ip: string;
  /** `details.action` names the event (CONTRACT §5). Never put secrets here. */
  details: { action: string } & Record<string, unknown>;
  risk?: string | null;
}

export async function recordAudit(store: Store, event: AuditEvent): Promise<void> {
  await store.db.auditEntry.create({
    data: {
      id: newId(),
      type: event.type,
      userId: event.userId,
      ip: event.ip,
      details: event.details as Prisma.InputJsonObject,
      risk: event.risk ?? null,
    },
  });
}
