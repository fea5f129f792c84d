import { expect, it } from 'vitest';
import { StreamJob, type SequencedEvent } from '../../src/core/streams/stream-job.js';

// A job's readers: live listeners (the SSE writer's path, one call per batch of events) and
// generators (the WebSocket channel, the Redis copy, the non-streaming replies). Both must see
// every event once, in order, and learn of the end.

const metadata = { conversationId: 'c', messageId: 'm', provider: 'openai', model: 'x', finishReason: 'stop' as const, usage: { inputTokens: 0, outputTokens: 0 }, durationMs: 1, timeToFirstTokenMs: 1 };
const text = (content: string) => ({ type: 'text' as const, content });
const seqs = (batch: readonly SequencedEvent[]) => batch.map(({ seq }) => seq);

it('tells a listener once for all the events pushed in one run of code, then once at the end', async () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000001', 'ann', 'openai');
  const seen: { lastSeq: number; running: boolean }[] = [];
  job.subscribe(() => {
    seen.push({ lastSeq: job.lastSeq, running: job.running });
  });
  job.push(text('a'));
  job.push(text('b'));
  // Told in a microtask, not inside push(): the generation never runs a reader's code.
  expect(seen).toEqual([]);
  await Promise.resolve();
  expect(seen).toEqual([{ lastSeq: 2, running: true }]);
  job.push(text('c'));
  job.push({ type: 'done', metadata });
  await Promise.resolve();
  expect(seen).toEqual([
    { lastSeq: 2, running: true },
    { lastSeq: 4, running: false },
  ]);
  expect(seqs(job.eventsAfter(1))).toEqual([2, 3, 4]);
  expect(job.eventsAfter(1).map(({ event }) => event.type)).toEqual(['text', 'text', 'done']);
  expect(job.eventsAfter(4)).toEqual([]);
  // Pushes after the end are ignored and tell nobody.
  job.push(text('late'));
  await Promise.resolve();
  expect(seen).toHaveLength(2);
  expect(job.lastSeq).toBe(4);
});

it('stops telling a listener once it unsubscribed', async () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000002', 'ann', 'openai');
  let calls = 0;
  const unsubscribe = job.subscribe(() => {
    calls += 1;
  });
  job.push(text('a'));
  await Promise.resolve();
  unsubscribe();
  job.push(text('b'));
  job.push({ type: 'done', metadata });
  await Promise.resolve();
  expect(calls).toBe(1);
});

it('gives generators the same events in batches, from any position, ending at done', async () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000003', 'ann', 'openai');
  job.push(text('a'));
  const fromStart: number[][] = [];
  const fromTwo: number[] = [];
  const reading = Promise.all([
    (async () => {
      for await (const batch of job.followInBatches(0)) fromStart.push(seqs(batch));
    })(),
    (async () => {
      for await (const { seq } of job.follow(2)) fromTwo.push(seq);
    })(),
  ]);
  await new Promise((resolve) => setImmediate(resolve));
  job.push(text('b'));
  job.push(text('c'));
  await new Promise((resolve) => setImmediate(resolve));
  job.push({ type: 'done', metadata });
  await reading;
  // What was there at once, then each run of pushes as one batch.
  expect(fromStart).toEqual([[1], [2, 3], [4]]);
  expect(fromTwo).toEqual([3, 4]);
});

it('ends a generator whose signal aborts while it waits, and leaves no waiter behind', async () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000004', 'ann', 'openai');
  job.push(text('a'));
  const controller = new AbortController();
  const got: number[] = [];
  const reading = (async () => {
    for await (const { seq } of job.follow(0, controller.signal)) got.push(seq);
  })();
  await new Promise((resolve) => setImmediate(resolve));
  controller.abort();
  await reading;
  expect(got).toEqual([1]);
  // The job goes on; the reader that left is not told of it any more.
  job.push(text('b'));
  await Promise.resolve();
  expect(job.running).toBe(true);
  expect(Reflect.get(job, 'waiters')).toEqual([]);
});

it('resolves finished() at the end however many wait, and at once for a finished job', async () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000005', 'ann', 'openai');
  let ended = 0;
  const waits = [job.finished(), job.finished()].map((wait) => wait.then(() => (ended += 1)));
  for (let index = 0; index < 100; index++) job.push(text(String(index)));
  await new Promise((resolve) => setImmediate(resolve));
  expect(ended).toBe(0);
  job.push({ type: 'done', metadata });
  await Promise.all(waits);
  expect(ended).toBe(2);
  await job.finished();
  const discarded = new StreamJob('00000000-0000-4000-8000-000000000006', 'ann', 'openai');
  const waiting = discarded.finished();
  discarded.discard();
  await waiting;
  expect(discarded.running).toBe(false);
});

it('keeps a plain text event as its text alone and gives it back as the same event, the same JSON', () => {
  const job = new StreamJob('00000000-0000-4000-8000-000000000003', 'ann', 'openai');
  const logprobs = [{ token: 'b', logprob: -0.1, bytes: null, top_logprobs: [] }];
  const events = [text('a'), { type: 'text' as const, content: 'b', logprobs }, { type: 'tool_call' as const, id: 't', name: 'n', params: {} }, { type: 'done' as const, metadata }];
  for (const event of events) job.push(event);
  // A stream holds its whole log for replays: a text event, nearly every event, costs its string
  // and a slot, not an object of its own besides (40 B each).
  const log = (job as unknown as { log: unknown[] }).log;
  expect(log[0]).toBe('a');
  expect(log[1]).toBe(events[1]);
  const replayed = job.eventsAfter(0).map(({ event }) => event);
  expect(replayed).toEqual(events);
  // What the SSE writer sends (JSON.stringify of each event) is unchanged, key order included.
  expect(replayed.map((event) => JSON.stringify(event))).toEqual(events.map((event) => JSON.stringify(event)));
  expect(job.doneMetadata).toEqual(metadata);
});
