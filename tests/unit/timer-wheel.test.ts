import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { TimerWheel } from '../../src/core/streams/timer-wheel.js';
import { waitFor } from '../helpers/wait-for.js';

// The one timer the streams share for their answer writes and pings: an entry must never fire
// before its delay (CONTRACT §6's "at most one write per 250 ms" rests on it), must fire within
// about a slot after it, and must not fire once cancelled.

/** An entry that records when it fired, measured from `start`. */
function recorder(start: number) {
  const firedAt: number[] = [];
  return { firedAt, entry: { fire: () => void firedAt.push(performance.now() - start) } };
}

it('fires each entry once, never before its delay and within about one slot after it', async () => {
  const wheel = new TimerWheel(20);
  const start = performance.now();
  const entries = [0, 30, 75, 140].map((delay) => ({ delay, ...recorder(start) }));
  for (const { entry, delay } of entries) wheel.schedule(entry, delay);
  expect(wheel.size).toBe(4);
  await waitFor(() => (wheel.size === 0 ? true : undefined), 2000, 'every entry to fire');
  // Nothing fires twice, even a few slots later.
  await sleep(60);
  for (const { firedAt, delay } of entries) {
    expect(firedAt).toHaveLength(1);
    expect(firedAt[0]).toBeGreaterThanOrEqual(delay);
    // One slot of rounding up and a slot for the interval's phase; the rest is the loop's lag on
    // a shared machine.
    expect(firedAt[0]).toBeLessThan(delay + 250);
  }
});

it('forgets a cancelled entry, and moves one scheduled again instead of filing it twice', async () => {
  const wheel = new TimerWheel(10);
  const start = performance.now();
  const cancelled = recorder(start);
  const moved = recorder(start);
  wheel.schedule(cancelled.entry, 20);
  wheel.schedule(moved.entry, 20);
  wheel.schedule(moved.entry, 80);
  wheel.cancel(cancelled.entry);
  expect(wheel.has(cancelled.entry)).toBe(false);
  expect(wheel.size).toBe(1);
  await sleep(200);
  expect(cancelled.firedAt).toEqual([]);
  expect(moved.firedAt).toHaveLength(1);
  expect(moved.firedAt[0]).toBeGreaterThanOrEqual(80);
});

it('lets an entry file itself again from its own call (a ping every interval)', async () => {
  const wheel = new TimerWheel(10);
  const start = performance.now();
  const firedAt: number[] = [];
  const ping = {
    fire: () => {
      firedAt.push(performance.now() - start);
      if (firedAt.length < 4) wheel.schedule(ping, 30);
    },
  };
  wheel.schedule(ping, 30);
  await sleep(400);
  expect(firedAt).toHaveLength(4);
  // Each at least the interval after the one before.
  for (let index = 1; index < firedAt.length; index++) expect((firedAt[index] ?? 0) - (firedAt[index - 1] ?? 0)).toBeGreaterThanOrEqual(30 - 1);
  expect(wheel.size).toBe(0);
});

it('fires every entry whose time passed while the event loop was blocked, in one go', async () => {
  const wheel = new TimerWheel(10);
  const start = performance.now();
  const entries = Array.from({ length: 50 }, (_, index) => ({ delay: index * 3, ...recorder(start) }));
  for (const { entry, delay } of entries) wheel.schedule(entry, delay);
  // Blocks past every deadline: the slots in between are not walked one by one for nothing.
  while (performance.now() - start < 250) {
    // busy on purpose
  }
  await sleep(50);
  for (const { firedAt, delay } of entries) {
    expect(firedAt).toHaveLength(1);
    expect(firedAt[0]).toBeGreaterThanOrEqual(delay);
  }
});

it('keeps other entries firing when one throws', async () => {
  const wheel = new TimerWheel(10);
  const start = performance.now();
  const after = recorder(start);
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => {
    uncaught.push(error);
  };
  process.on('uncaughtException', onUncaught);
  try {
    wheel.schedule(
      {
        fire: () => {
          throw new Error('one entry failed');
        },
      },
      10,
    );
    wheel.schedule(after.entry, 10);
    await sleep(100);
  } finally {
    process.off('uncaughtException', onUncaught);
  }
  expect(after.firedAt).toHaveLength(1);
  expect(uncaught).toEqual([expect.objectContaining({ message: 'one entry failed' })]);
});
