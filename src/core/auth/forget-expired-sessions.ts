import type { Store } from '../db/store.js';

/** A session is remembered this long past its last token's expiry, so a late refresh is still a refresh. */
const graceMs = 24 * 60 * 60 * 1000;

/** Forgets token sessions whose last token expired over a day ago; returns how many went. */
export async function forgetExpiredSessions(store: Store, now = new Date()): Promise<number> {
  const { count } = await store.db.authSession.deleteMany({ where: { expiresAt: { lt: new Date(now.getTime() - graceMs) } } });
  return count;
}
