import type { Store } from '../db/store.js';
import { jsonObject } from '../db/store.js';
import type { AuditType } from './record-audit.js';

export interface AuditEntryView {
  id: string;
  timestamp: string;
  type: string;
  userId: string;
  ip: string;
  details: Record<string, unknown>;
  risk: string | null;
}

export interface AuditQuery {
  limit: number;
  offset: number;
  type?: AuditType;
}

/** A page of the audit log, newest first, with the total of entries matching the filter. */
export async function listAudit(store: Store, query: AuditQuery): Promise<{ entries: AuditEntryView[]; total: number }> {
  const where = query.type ? { type: query.type } : {};
  const [rows, total] = await Promise.all([
    store.db.auditEntry.findMany({
      where,
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      skip: query.offset,
      take: query.limit,
    }),
    store.db.auditEntry.count({ where }),
  ]);
  return {
    entries: rows.map((row) => ({
      id: row.id,
      timestamp: row.timestamp.toISOString(),
      type: row.type,
      userId: row.userId,
      ip: row.ip,
      details: jsonObject(row.details),
      risk: row.risk,
    })),
    total,
  };
}
