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

let lastTimestamp = 0;

/**
 * Entries are listed newest first by timestamp, which has millisecond precision: a command held
 * and confirmed in the same millisecond must still list in order, so this instance never hands
 * out the same or an earlier timestamp twice.
 */
function nextTimestamp(): Date {
  lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
  return new Date(lastTimestamp);
}

export async function recordAudit(store: Store, event: AuditEvent): Promise<void> {
  await store.db.auditEntry.create({
    data: {
      id: newId(),
      timestamp: nextTimestamp(),
      type: event.type,
      userId: event.userId,
      ip: event.ip,
      details: event.details as Prisma.InputJsonObject,
      risk: event.risk ?? null,
    },
  });
}
