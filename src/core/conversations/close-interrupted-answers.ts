import type { Store } from '../db/store.js';

/**
 * Assistant messages still marked as streaming belong to a process that died mid-answer: they
 * are closed with finishReason `error` at start-up (CONTRACT §6), keeping what was stored.
 */
export async function closeInterruptedAnswers(store: Store): Promise<number> {
  const { count } = await store.db.message.updateMany({
    where: { streaming: true },
    data: { streaming: false, finishReason: 'error' },
  });
  return count;
}
