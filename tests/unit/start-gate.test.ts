import { describe, expect, it } from 'vitest';
import { StartGate } from '../../src/core/chat/start-gate.js';

// The gate that lets a few exchanges prepare at a time (start-gate.ts): never more than its
// limit at once, in the order they came, a place freed by a failure too, and nobody held past
// the longest wait by preparations that do not end.

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the exchange start gate', () => {
  it('lets at most its limit prepare at once, in arrival order, and frees a place when a preparation fails', async () => {
    const gate = new StartGate(2, 60_000);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const runs = Array.from({ length: 6 }, (_, index) =>
      gate.run(async () => {
        running++;
        most = Math.max(most, running);
        order.push(index);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        if (index === 1) throw new Error('failed preparation');
        return index;
      }),
    );
    // Watched from the start: the failing one must not reject unobserved.
    const outcomes = Promise.allSettled(runs);
    await tick();
    // One preparation ends at a time; whoever waits longest gets its place.
    while (order.length < 6 || releases.length > 0) {
      releases.shift()?.();
      await tick();
    }
    const settled = await outcomes;
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('sends a waiter ahead without a place once it has waited the longest wait', async () => {
    const gate = new StartGate(1, 50);
    let release!: () => void;
    const stuck = gate.run(() => new Promise<void>((resolve) => (release = resolve)));
    const started = performance.now();
    const late = await gate.run(() => Promise.resolve(performance.now() - started));
    expect(late).toBeGreaterThanOrEqual(45);
    expect(late).toBeLessThan(2000);
    release();
    await stuck;
    // The place the stuck one held is free again: the next one runs at once.
    const next = performance.now();
    await gate.run(() => Promise.resolve());
    expect(performance.now() - next).toBeLessThan(40);
  });
});
