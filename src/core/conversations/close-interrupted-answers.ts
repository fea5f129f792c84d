import type { Store } from '../db/store.js';

/**
 * Assistant messages still marked as streaming whose writer is gone belong to a process that
 * died mid-answer: they are closed with finishReason `error` (CONTRACT §6), keeping what was
 * stored. Several instances share one database, so the answers of a writer that still lives
 * (`alive`: it listens on the cluster bus; when that cannot be told, it is assumed alive and the
 * next run decides) are left alone. Without Redis there is one instance: every leftover is closed.
 */
export async function closeInterruptedAnswers(
  store: Store,
  self: string,
  alive: (instanceId: string) => Promise<boolean> = () => Promise.resolve(false),
): Promise<number> {
  const writers = await store.db.message.findMany({ where: { streaming: true }, distinct: ['writer'], select: { writer: true } });
  let closed = 0;
  for (const { writer } of writers) {
    if (writer === self || (writer !== null && (await alive(writer).catch(() => true)))) continue;
    const { count } = await store.db.message.updateMany({
      where: { streaming: true, writer },
      data: { streaming: false, finishReason: 'error' },
    });
    closed += count;
  }
  return closed;
}

/**
 * For the periodic run: a writer counts as gone only when missing from the bus on two runs in a
 * row. Right after a Redis restart the instances' listening connections come back a moment after
 * their other ones, and one reading then must not close the answers of writers still at work.
 */
export function missingTwice(listening: (instanceId: string) => Promise<boolean>): (instanceId: string) => Promise<boolean> {
  const missedOnce = new Set<string>();
  return async (writer) => {
    if (await listening(writer)) {
      missedOnce.delete(writer);
      return true;
    }
    if (missedOnce.delete(writer)) return false;
    missedOnce.add(writer);
    return true;
  };
}
