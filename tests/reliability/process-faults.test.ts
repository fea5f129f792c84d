import BetterSqlite3 from 'better-sqlite3';
import { expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { startFakeOllama } from '../fakes/index.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { openSse } from '../helpers/sse.js';
import { request } from '../helpers/test-service.js';
import { reliabilityCount } from './reliability-level.js';

// Issue 7's process faults: the service is killed with SIGKILL while answers stream and
// conversations are being written, round after round (20 under `npm run reliability`). Every
// restart must open the database, keep every acknowledged write exactly, and close each answer the
// kill cut as `error` with the text it had stored (CONTRACT §6), never leaving one mid-stream.

const CHUNKS = Array.from({ length: 40 }, (_, index) => `w${index} `);
const FULL_ANSWER = CHUNKS.join('');
const STREAMS_PER_ROUND = 4;
const WRITERS = 3;

interface StoredMessage {
  role: string;
  content: string;
  finishReason?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function messagesOf(url: string, conversationId: string): Promise<StoredMessage[]> {
  const reply = await request(url, 'GET', `/api/conversation/${conversationId}`);
  expect(reply.status, reply.text).toBe(200);
  return (reply.body.messages as StoredMessage[]).map(({ role, content, finishReason }) => ({ role, content, finishReason }));
}

describeOnDatabases('kill -9 during streaming and writing', (kind) => {
  it('restarts every time with every acknowledged write intact and each cut answer closed as error', async () => {
    await using fake = await startFakeOllama();
    // Slow enough (4 s per answer) that every kill lands mid-answer.
    fake.setDefault({ kind: 'text', chunks: CHUNKS, chunkDelayMs: 100 });
    const database = await createTestDatabase(kind);
    const env = { DATABASE_URL: database.url, OLLAMA_BASE_URL: fake.url, MAX_STREAMS_PER_USER: '50' };
    /** Acknowledged saves: conversation id → its message contents. */
    const saved = new Map<string, string[]>();
    /** Conversations whose answer a kill cut, with the question asked. */
    const cut = new Map<string, string>();
    /** Cut answers found stored in part, so the check of how they were closed has had something to check. */
    const partials = new Set<string>();
    let service: ChildService | undefined;
    const rounds = reliabilityCount(kind === 'sqlite' ? 5 : 3, 20);
    try {
      for (let round = 0; round <= rounds; round++) {
        service = await spawnService(env);
        const { url } = service;

        // Everything the earlier rounds were told was stored is there, exactly.
        for (const [id, contents] of saved) expect((await messagesOf(url, id)).map((message) => message.content), id).toEqual(contents);
        for (const [id, question] of cut) {
          const messages = await messagesOf(url, id);
          expect(messages[0], id).toEqual({ role: 'user', content: question, finishReason: undefined });
          // The answer may not have been written before the kill; if it was, it is closed as error
          // with a prefix of the answer (stored as it grew).
          expect(messages.length, id).toBeLessThanOrEqual(2);
          if (messages[1]) {
            expect(messages[1]).toMatchObject({ role: 'assistant', finishReason: 'error' });
            expect(FULL_ANSWER.startsWith(messages[1].content), messages[1].content).toBe(true);
            partials.add(id);
          }
        }
        if (round === rounds) break;

        // Streams in conversations of their own, then writers saving until the kill.
        const streams = await Promise.all(
          Array.from({ length: STREAMS_PER_ROUND }, async (_, index) => {
            const question = `round ${round} stream ${index}`;
            const made = await request(url, 'POST', '/api/conversation/save', { json: { title: question, conversationData: { messages: [] } } });
            const conversationId = made.body.conversationId as string;
            saved.delete(conversationId);
            const stream = await openSse(`${url}/api/message/stream`, { json: { message: question, mode: 'chat', conversation_id: conversationId } });
            expect(stream.status).toBe(200);
            cut.set(conversationId, question);
            return stream;
          }),
        );
        const state = { killed: false };
        const writer = async (worker: number) => {
          for (let index = 0; !state.killed; index++) {
            const messages = Array.from({ length: 10 }, (_, at) => ({ role: at % 2 === 0 ? 'user' : 'assistant', content: `r${round} w${worker} #${index} m${at} ${'x'.repeat(100)}` }));
            try {
              const reply = await request(url, 'POST', '/api/conversation/save', { json: { conversationData: { messages } } });
              if (reply.status === 200) saved.set(reply.body.conversationId as string, messages.map((message) => message.content));
            } catch {
              return; // the connection died with the process
            }
          }
        };
        const writers = Array.from({ length: WRITERS }, (_, worker) => writer(worker));
        // Somewhere between 0.3 and 1.5 s in: some answers have been stored in part, some not.
        await sleep(300 + Math.floor(Math.random() * 1200));
        service.child.kill('SIGKILL');
        expect((await service.exit).signal).toBe('SIGKILL');
        state.killed = true;
        await Promise.all(writers);
        await Promise.all(streams.map((stream) => stream.cancel().catch(() => undefined)));
      }
      expect(saved.size).toBeGreaterThan(rounds);
      expect(cut.size).toBe(rounds * STREAMS_PER_ROUND);
      expect(partials.size).toBeGreaterThan(0);
      if (kind === 'sqlite') {
        const raw = new BetterSqlite3(sqliteFilePath(database.url), { readonly: true });
        try {
          expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
        } finally {
          raw.close();
        }
      }
    } finally {
      service?.child.kill('SIGKILL');
      await service?.exit;
      await database.drop();
    }
  }, 300_000);
});
