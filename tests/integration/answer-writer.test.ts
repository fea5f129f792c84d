import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ChatStore } from '../../src/core/chat-store/chat-store.js';
import { ANSWER_WRITE_INTERVAL_MS, AnswerWriter, answerWriteInterval } from '../../src/core/chat/answer-writer.js';
import { createDatabase, type Database } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createLogger } from '../../src/core/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

// CONTRACT §6: a growing answer is stored at most once per 250 ms, and at the end. The writer's
// waits are entries on the streams' shared timer wheel; this holds them to the contract against
// the real SQLite store, every write recorded on its way in.

const target = { provider: 'openai', model: 'gpt-4o-mini' };

let database: TestDatabase;
let opened: Database;

beforeEach(async () => {
  database = await createTestDatabase('sqlite');
  await migrate(database.url);
  opened = await createDatabase(database.url, 'instance-a');
});

afterEach(async () => {
  await opened.close();
  await database.drop();
});

/** The real store, with the time of each growing write noted as it is asked for. */
function recording(store: ChatStore): { store: ChatStore; writes: { at: number; content: string }[] } {
  const writes: { at: number; content: string }[] = [];
  const recorded: ChatStore = Object.create(store) as ChatStore;
  recorded.openAnswer = (conversationId, answerTarget, snapshot, id) => {
    writes.push({ at: performance.now(), content: snapshot.content });
    return store.openAnswer(conversationId, answerTarget, snapshot, id);
  };
  recorded.saveAnswer = (messageId, snapshot) => {
    writes.push({ at: performance.now(), content: snapshot.content });
    return store.saveAnswer(messageId, snapshot);
  };
  return { store: recorded, writes };
}

it('writes a growing answer at most once per 250 ms, the first 250 ms after it started, and whole at the end', async () => {
  const recorded = await opened.chat.recordQuestion({ userId: 'ann', conversationId: null, content: 'q', defaultTitle: 'q', historyLimit: 50 });
  const conversationId = recorded?.conversation.id ?? '';
  const { store, writes } = recording(opened.chat);
  const started = performance.now();
  const writer = new AnswerWriter(store, conversationId, target, { logger: createLogger('silent') });
  let text = '';
  // A chunk every 10 ms for 1.1 s: a write per chunk would be 110 of them.
  while (performance.now() - started < 1100) {
    text += 'x';
    writer.update({ content: text, toolCalls: [] });
    await sleep(10);
  }
  const stored = await writer.finish({ content: text, toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } }, 'ann');

  expect(writes.length).toBeGreaterThanOrEqual(2);
  expect(writes.length).toBeLessThanOrEqual(4);
  expect((writes[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(ANSWER_WRITE_INTERVAL_MS);
  for (let index = 1; index < writes.length; index++) {
    expect((writes[index]?.at ?? 0) - (writes[index - 1]?.at ?? 0)).toBeGreaterThanOrEqual(ANSWER_WRITE_INTERVAL_MS);
    // Each write stores the text as it was then: longer each time.
    expect(writes[index]?.content.length).toBeGreaterThan(writes[index - 1]?.content.length ?? 0);
  }
  // The same row, closed whole.
  const row = await opened.db.message.findUniqueOrThrow({ where: { id: stored.messageId ?? '' } });
  expect(row).toMatchObject({ role: 'assistant', content: text, streaming: false, finishReason: 'stop' });
  expect(await opened.db.message.count({ where: { conversationId, role: 'assistant' } })).toBe(1);
});

it('stores an answer that ends before its first interval once, whole, and leaves no write pending', async () => {
  const recorded = await opened.chat.recordQuestion({ userId: 'ann', conversationId: null, content: 'q', defaultTitle: 'q', historyLimit: 50 });
  const conversationId = recorded?.conversation.id ?? '';
  const { store, writes } = recording(opened.chat);
  // The request's logger is made on first use: a writer whose writes all succeed never asks for it.
  let loggerReads = 0;
  const log = {
    get logger() {
      loggerReads++;
      return createLogger('silent');
    },
  };
  const writer = new AnswerWriter(store, conversationId, target, log);
  writer.update({ content: 'Short', toolCalls: [] });
  writer.update({ content: 'Short answer', toolCalls: [] });
  const stored = await writer.finish({ content: 'Short answer', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } }, 'ann');
  // Past the interval: the write it had waiting was cancelled with the finish.
  await sleep(ANSWER_WRITE_INTERVAL_MS + 100);
  expect(writes).toEqual([]);
  expect(await opened.db.message.findUniqueOrThrow({ where: { id: stored.messageId ?? '' } })).toMatchObject({ content: 'Short answer', streaming: false });
  expect(loggerReads).toBe(0);
});

it('keeps 250 ms for ordinary loads and widens the interval only when very many answers grow at once', () => {
  expect(answerWriteInterval(1)).toBe(ANSWER_WRITE_INTERVAL_MS);
  expect(answerWriteInterval(100)).toBe(ANSWER_WRITE_INTERVAL_MS);
  // Never under 250 ms, growing with the count, bounded so a crash loses a few seconds at most.
  const counts = [125, 250, 500, 1000, 2000, 10_000];
  const intervals = counts.map(answerWriteInterval);
  for (const interval of intervals) expect(interval).toBeGreaterThanOrEqual(ANSWER_WRITE_INTERVAL_MS);
  for (let index = 1; index < intervals.length; index++) expect(intervals[index]).toBeGreaterThanOrEqual(intervals[index - 1] ?? 0);
  expect(answerWriteInterval(1000)).toBeGreaterThan(ANSWER_WRITE_INTERVAL_MS);
  expect(answerWriteInterval(10_000)).toBeLessThanOrEqual(4000);
});
