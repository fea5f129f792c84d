import type { Store } from '../db/store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes entries older than AUDIT_LOG_RETENTION_DAYS; returns how many went. */
export async function purgeAudit(store: Store, retentionDays: number, now = new Date()): Promise<number> {
  const { count } = await store.db.auditEntry.deleteMany({
    where: { timestamp: { lt: new Date(now.getTime() - retentionDays * DAY_MS) } },
  });
  return count;
}
