import type { Store } from '../db/store.js';

/**
 * Marks held commands past their lifetime as `expired`. Listing and confirmation already ignore
 * them by `expiresAt`; this keeps the stored status truthful for anyone reading the table.
 */
export async function expirePendingCommands(store: Store, now = new Date()): Promise<number> {
  const { count } = await store.db.pendingCommand.updateMany({
    where: { status: 'pending', expiresAt: { lte: now } },
    data: { status: 'expired' },
  });
  return count;
}
