import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { request, startTestService } from '../helpers/test-service.js';

// Stored data survives restarts, and a kill -9 in the middle of writes loses nothing committed.

describeOnDatabases('restart', (kind) => {
  it('keeps conversations, messages and the current conversation across a restart', async () => {
    const database = await createTestDatabase(kind);
    try {
      const first = await startTestService(kind, {}, database);
      const saved = await first.request('POST', '/api/conversation/save', {
        json: { title: 'Survivor', conversationData: { messages: [{ role: 'user', content: 'still here?' }, { role: 'assistant', content: 'yes' }] } },
      });
      const id = saved.body.conversationId as string;
      await first.request('POST', `/api/conversation/${id}/set-current`);
      await first.stop();

      const second = await startTestService(kind, {}, database);
      const loaded = await second.request('GET', `/api/conversation/${id}`);
      expect(loaded.status).toBe(200);
      expect(loaded.body.conversation).toMatchObject({ title: 'Survivor', messageCount: 2 });
      expect(loaded.body.messages.map((m: { content: string }) => m.content)).toEqual(['still here?', 'yes']);
      expect((await second.request('GET', '/api/context')).body.conversationId).toBe(id);
      await second.stop();
    } finally {
      await database.drop();
    }
  });
});

describe('kill -9 during writes (SQLite)', () => {
  it('leaves a database that opens with every acknowledged conversation whole', async () => {
    const database = await createTestDatabase('sqlite');
    let service: ChildService | undefined;
    try {
      service = await spawnService({ DATABASE_URL: database.url });
      const { url } = service;
      const acknowledged = new Map<string, string[]>();
      let stop = false;
      const writer = async (worker: number) => {
        for (let round = 0; !stop; round++) {
          const messages = Array.from({ length: 20 }, (_, index) => ({
            role: index % 2 === 0 ? 'user' : 'assistant',
            content: `w${worker} r${round} m${index} ${'x'.repeat(200)}`,
          }));
          try {
            const res = await request(url, 'POST', '/api/conversation/save', { json: { conversationData: { messages } } });
            if (res.status === 200) acknowledged.set(res.body.conversationId as string, messages.map((m) => m.content));
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const writers = Array.from({ length: 6 }, (_, worker) => writer(worker));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      service.child.kill('SIGKILL');
      await service.exit;
      stop = true;
      await Promise.all(writers);
      expect(acknowledged.size).toBeGreaterThan(5);

      const raw = new BetterSqlite3(sqliteFilePath(database.url));
      expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
      // An import is one transaction: no conversation may be left with part of its messages.
      const partial = raw
        .prepare('SELECT c.id, COUNT(m.id) AS n FROM Conversation c LEFT JOIN Message m ON m.conversationId = c.id GROUP BY c.id HAVING n NOT IN (0, 20)')
        .all();
      raw.close();
      expect(partial).toEqual([]);

      await using restarted = await startTestService('sqlite', {}, database);
      for (const [id, contents] of acknowledged) {
        const loaded = await restarted.request('GET', `/api/conversation/${id}`);
        expect(loaded.status).toBe(200);
        expect(loaded.body.messages.map((m: { content: string }) => m.content)).toEqual(contents);
      }
    } finally {
      service?.child.kill('SIGKILL');
      await database.drop();
    }
  });
});
