import { afterEach, expect, it, vi } from 'vitest';
import { StreamRegistry } from '../../src/core/streams/stream-registry.js';
import type { StreamJob } from '../../src/core/streams/stream-job.js';

// The registry keeps running streams counted per user (CONTRACT §1's cap), and finished ones
// for replay until STREAM_RETENTION_MS or its memory budget, whichever comes first.

afterEach(() => {
  vi.useRealTimers();
});

const metadata = { conversationId: 'c', messageId: 'm', provider: 'openai', model: 'x', finishReason: 'stop' as const, usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 1, timeToFirstTokenMs: 1 };

function finish(job: StreamJob, text = 'hello'): void {
  job.push({ type: 'text', content: text });
  job.push({ type: 'done', metadata });
}

it('caps running streams per user and frees a place when one finishes or is dropped', () => {
  const registry = new StreamRegistry({ maxPerUser: 2, retentionMs: 60_000, maxRetainedBytes: 1e9 });
  const first = registry.open('ann', 'openai');
  const second = registry.open('ann', 'openai');
  expect(() => registry.open('ann', 'openai')).toThrow(expect.objectContaining({ code: 'RATE_LIMIT_EXCEEDED', details: { cap: 2 } }));
  // Another user's streams are not counted against ann.
  registry.open('bob', 'openai');
  finish(first);
  const third = registry.open('ann', 'openai');
  registry.drop(second);
  registry.open('ann', 'openai');
  expect(() => registry.open('ann', 'openai')).toThrow(expect.objectContaining({ code: 'RATE_LIMIT_EXCEEDED' }));
  // The finished one is still there to replay; the dropped one is gone.
  expect(registry.require('ann', first.id)).toBe(first);
  expect(() => registry.require('ann', second.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  expect(() => registry.require('bob', third.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
});

it('forgets finished streams once their retention has passed', () => {
  vi.useFakeTimers();
  const registry = new StreamRegistry({ maxPerUser: 10, retentionMs: 5000, maxRetainedBytes: 1e9 });
  const early = registry.open('ann', 'openai');
  finish(early);
  vi.advanceTimersByTime(3000);
  const late = registry.open('ann', 'openai');
  finish(late);
  vi.advanceTimersByTime(2500);
  expect(() => registry.require('ann', early.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  expect(registry.require('ann', late.id)).toBe(late);
  vi.advanceTimersByTime(3000);
  expect(() => registry.require('ann', late.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
});

it('forgets the oldest finished streams early when they would hold more than the budget', () => {
  const registry = new StreamRegistry({ maxPerUser: 10, retentionMs: 600_000, maxRetainedBytes: 10_000 });
  const jobs = Array.from({ length: 6 }, () => {
    const job = registry.open('ann', 'openai');
    finish(job, 'x'.repeat(1500));
    return job;
  });
  // Each holds about 4.6 KB (the job, two bytes a character, the events' objects): two fit.
  const kept = jobs.filter((job) => {
    try {
      registry.require('ann', job.id);
      return true;
    } catch {
      return false;
    }
  });
  expect(kept).toEqual(jobs.slice(-2));
  expect(kept[0]?.approximateBytes).toBeGreaterThan(4000);
});

it('answers 404 the moment retention ends, not at the next sweep', () => {
  vi.useFakeTimers();
  const registry = new StreamRegistry({ maxPerUser: 10, retentionMs: 1500, maxRetainedBytes: 1e9 });
  const job = registry.open('ann', 'openai');
  finish(job);
  vi.advanceTimersByTime(1400);
  expect(registry.require('ann', job.id)).toBe(job);
  // The sweeper ran at 1000 ms and runs next at 2000 ms.
  vi.advanceTimersByTime(200);
  expect(() => registry.require('ann', job.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
});

it("counts a tool's arguments and result at their size, so large ones use up the budget", () => {
  const registry = new StreamRegistry({ maxPerUser: 10, retentionMs: 600_000, maxRetainedBytes: 1_000_000 });
  const content = 'x'.repeat(256 * 1024);
  const jobs = Array.from({ length: 3 }, () => {
    const job = registry.open('ann', 'openai');
    job.push({ type: 'tool_call', id: 'c1', name: 'read_file', params: { path: 'big.txt' } });
    job.push({ type: 'tool_result', id: 'c1', name: 'read_file', result: { path: 'big.txt', content } });
    finish(job);
    return job;
  });
  expect(jobs[0]?.approximateBytes).toBeGreaterThan(2 * content.length);
  // Each holds over 512 KB: only the newest fits in 1 MB.
  expect(() => registry.require('ann', jobs[0]?.id ?? '')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  expect(() => registry.require('ann', jobs[1]?.id ?? '')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  expect(registry.require('ann', jobs[2]?.id ?? '')).toBe(jobs[2]);
});

it('keeps a handed-over stream for its transport’s first read, however short the retention (CONTRACT §12: a stream after a 2xx)', () => {
  vi.useFakeTimers();
  // Retention 0 and no memory budget: a finished stream is gone at once, unless it was handed over.
  const registry = new StreamRegistry({ maxPerUser: 10, retentionMs: 0, maxRetainedBytes: 0 });
  const plain = registry.open('ann', 'openai');
  finish(plain);
  expect(() => registry.require('ann', plain.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));

  // The provider failed right after its 2xx: the job finished before the reply looked it up.
  const handed = registry.open('ann', 'openai');
  registry.handOver(handed);
  finish(handed);
  expect(() => registry.require('bob', handed.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  expect(registry.require('ann', handed.id)).toBe(handed);
  // Only that first read: afterwards the retention applies as to every stream.
  expect(() => registry.require('ann', handed.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));

  // A stream nobody comes to read is kept for a while, then retained (and here forgotten) as usual.
  const unread = registry.open('ann', 'openai');
  registry.handOver(unread);
  finish(unread);
  vi.advanceTimersByTime(29_000);
  expect(registry.has(unread.id)).toBe(true);
  vi.advanceTimersByTime(2_000);
  expect(registry.has(unread.id)).toBe(false);

  // Read while it still runs: it is then an ordinary stream when it finishes.
  const live = registry.open('ann', 'openai');
  registry.handOver(live);
  expect(registry.require('ann', live.id)).toBe(live);
  finish(live);
  expect(() => registry.require('ann', live.id)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
});

it('gives every job the same finish callback, not a closure of its own that each kept job would hold', () => {
  const registry = new StreamRegistry({ maxPerUser: 2, retentionMs: 60_000, maxRetainedBytes: 1e9 });
  const onFinish = (job: StreamJob) => (job as unknown as { onFinish: unknown }).onFinish;
  const first = registry.open('ann', 'openai');
  const second = registry.open('ann', 'openai');
  expect(onFinish(first)).toBe(onFinish(second));
  // And it still does its work: the finished job frees its place.
  finish(first);
  expect(() => registry.open('ann', 'openai')).not.toThrow();
});
