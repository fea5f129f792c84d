import type { Store } from '../db/store.js';
import { riskLevels, type RiskLevel } from '../security/risk-levels.js';

export interface PendingCommandView {
  id: string;
  command: string;
  risk: RiskLevel;
  reasons: string[];
  timestamp: string;
  expiresAt: string;
  terminalId: string;
  workingDirectory: string;
  userId: string;
}

/** Commands waiting for confirmation, newest first: the caller's own, or everyone's (`all`). */
export async function listPendingCommands(store: Store, userId: string, all: boolean): Promise<PendingCommandView[]> {
  const rows = await store.db.pendingCommand.findMany({
    where: { status: 'pending', expiresAt: { gt: new Date() }, ...(all ? {} : { userId }) },
    orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
  });
  return rows.map((row) => ({
    id: row.id,
    command: row.command,
    // Stored by the pipeline from a RiskLevel; an unknown value would be a damaged row, shown as the worst.
    risk: riskLevels.find((level) => level === row.risk) ?? 'critical',
    reasons: Array.isArray(row.reasons) ? row.reasons.map(String) : [],
    timestamp: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    terminalId: row.terminalId,
    workingDirectory: row.workingDirectory,
    userId: row.userId,
  }));
}
