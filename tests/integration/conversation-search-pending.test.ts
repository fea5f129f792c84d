import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteConversationReads } from '../../src/core/chat-store/sqlite-conversation-reads.js';
import { indexAllPending, indexPending, prepareIndexStatements, SqliteSearchIndexer } from '../../src/core/chat-store/sqlite-search-indexer.js';
import { SqliteWriteBatch } from '../../src/core/chat-store/sqlite-write-batch.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait-for.js';

// The search index fed off the commit (issue 24, the search_pending migration): a stored message
// waits in "ConversationSearchPending" until the indexer moves it into the FTS5 index. These
// attack the window: a message must be found from the moment its commit ends, whether the indexer
// has moved it, is moving it while the search runs, or never gets to it; a removed or rewritten
// message must not be found by its old text; a title assigned its own value is not re-indexed.

const owner = 'pending-owner';
const at = '2026-01-01T00:00:00.000+00:00';

describe('conversation search with a pending index on SQLite', () => {
  let database: TestDatabase;
  let raw: BetterSqlite3.Database;
  let reads: SqliteConversationReads;
  const count = (sql: string, ...params: string[]) => raw.prepare<string[], { n: number }>(sql).get(...params)?.n ?? -1;
  const pendingRows = () => count(`SELECT COUNT(*) AS n FROM "ConversationSearchPending"`);
  const search = async (text: string) => {
    const page = await reads.list({ ownerId: owner, text, limit: 500, offset: 0 });
    return { ids: page.rows.map((row) => row.id).sort(), total: page.total };
  };

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    await migrate(database.url);
    raw = new BetterSqlite3(sqliteFilePath(database.url));
    reads = new SqliteConversationReads(sqliteFilePath(database.url));
  });

  afterAll(async () => {
    await reads.close();
    raw.close();
    await database.drop();
  });

  function conversation(id: string, title = '', ownerId = owner): void {
    raw.prepare(`INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES (?, ?, ?, 1, 1, ?, ?)`).run(id, ownerId, title, at, at);
  }
  function message(id: string, conversationId: string, seq: number, content: string): void {
    raw.prepare(`INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt") VALUES (?, ?, ?, 'user', ?, 0, ?)`).run(id, conversationId, seq, content, at);
  }

  it('finds a stored message while it is pending and after it is indexed, and never by text it no longer holds', async () => {
    conversation('p1');
    message('p1-0', 'p1', 0, 'a quokka on the ferry');
    expect(count(`SELECT COUNT(*) AS n FROM "ConversationSearchEntry" WHERE "messageId" = 'p1-0'`)).toBe(0);
    expect(pendingRows()).toBe(1);
    expect(await search('QUOKKA')).toEqual({ ids: ['p1'], total: 1 });
    // Rewritten while pending: the new text only.
    raw.prepare(`UPDATE "Message" SET content = 'a wombat on the ferry' WHERE id = 'p1-0'`).run();
    expect(pendingRows()).toBe(1);
    expect((await search('quokka')).total).toBe(0);
    expect((await search('wombat')).total).toBe(1);
    indexAllPending(raw);
    expect(pendingRows()).toBe(0);
    expect((await search('wombat')).total).toBe(1);
    // Rewritten once indexed: the old text leaves the index at once, the new one waits pending.
    raw.prepare(`UPDATE "Message" SET content = 'a numbat on the ferry' WHERE id = 'p1-0'`).run();
    expect((await search('wombat')).total).toBe(0);
    expect((await search('numbat')).total).toBe(1);
    // Removed while pending: gone from the list and from every search.
    message('p1-1', 'p1', 1, 'a platypus');
    raw.prepare(`DELETE FROM "Message" WHERE id = 'p1-1'`).run();
    expect(count(`SELECT COUNT(*) AS n FROM "ConversationSearchPending" WHERE "messageId" = 'p1-1'`)).toBe(0);
    expect((await search('platypus')).total).toBe(0);
    // A conversation removed whole takes its pending rows with it (the messages' cascade).
    raw.prepare(`DELETE FROM "Conversation" WHERE id = 'p1'`).run();
    expect(pendingRows()).toBe(0);
    expect((await search('numbat')).total).toBe(0);
  });

  it("keeps someone else's pending messages out of the owner's search", async () => {
    conversation('theirs', '', 'someone-else');
    message('theirs-0', 'theirs', 0, 'a secret echidna');
    expect((await search('echidna')).total).toBe(0);
    indexAllPending(raw);
    expect((await search('echidna')).total).toBe(0);
  });

  it('finds every stable message while the indexer moves them under a running search', async () => {
    // 300 conversations, each with one message holding the needle, all pending; an indexer step
    // of a few rows runs between every turn of the search, so rows move at every point of it:
    // before the pending walk, during it, between it and the lookup, during the lookup.
    const CONVERSATIONS = 300;
    raw.transaction(() => {
      for (let i = 0; i < CONVERSATIONS; i++) {
        const id = `race-${String(i).padStart(4, '0')}`;
        conversation(id);
        message(`${id}-m`, id, 0, `racing needle number ${i}`);
      }
    })();
    const statements = prepareIndexStatements(raw);
    for (let round = 0; round < 8; round++) {
      // Half indexed, half pending, at a different split each round.
      raw.prepare(`DELETE FROM "Message" WHERE "conversationId" LIKE 'race-%'`).run();
      raw.transaction(() => {
        for (let i = 0; i < CONVERSATIONS; i++) message(`race-${String(i).padStart(4, '0')}-m${round}`, `race-${String(i).padStart(4, '0')}`, round + 1, `racing needle number ${i}`);
      })();
      raw.transaction(() => indexPending(statements, round * 0.05))();
      // A row moved at every microtask (between any two statements of the search), 20 in a turn,
      // then on at the next turn, so the search's own turns still come.
      let moving = true;
      let movedThisTurn = 0;
      const move = () => {
        if (!moving) return;
        raw.transaction(() => indexPending(statements, 0))();
        if (++movedThisTurn < 20) queueMicrotask(move);
        else
          setImmediate(() => {
            movedThisTurn = 0;
            move();
          });
      };
      queueMicrotask(move);
      const found = await search('racing needle');
      moving = false;
      expect(found.total, `round ${round}`).toBe(CONVERSATIONS);
    }
  });

  it('re-indexes a title only when it changes', async () => {
    conversation('titled', 'Kestrel notes');
    // Counts the index entries removed, on this connection only.
    raw.exec(`CREATE TEMP TABLE removed (n INTEGER);
      CREATE TEMP TRIGGER count_removed AFTER DELETE ON main."ConversationSearchEntry" BEGIN INSERT INTO removed VALUES (1); END;`);
    const removed = () => count(`SELECT COUNT(*) AS n FROM temp.removed`);
    try {
      // What every question does: assigns the title its own value when it is not empty.
      raw.prepare(`UPDATE "Conversation" SET title = CASE WHEN title = '' THEN 'x' ELSE title END WHERE id = 'titled'`).run();
      expect(removed()).toBe(0);
      expect((await search('kestrel')).ids).toContain('titled');
      raw.prepare(`UPDATE "Conversation" SET title = 'Merlin notes' WHERE id = 'titled'`).run();
      expect(removed()).toBe(1);
      expect((await search('kestrel')).ids).not.toContain('titled');
      expect((await search('merlin')).ids).toContain('titled');
    } finally {
      raw.exec(`DROP TRIGGER temp.count_removed; DROP TABLE temp.removed;`);
    }
  });

  it('indexes what the store queues after a short delay, and what others wrote by its sweep', async () => {
    const db = new BetterSqlite3(sqliteFilePath(database.url));
    const indexer = new SqliteSearchIndexer(db, new SqliteWriteBatch(db), 200);
    try {
      await waitFor(() => (pendingRows() === 0 ? true : undefined), 5000, "the pending rows indexed");
      conversation('swept');
      message('swept-0', 'swept', 0, 'written by another connection');
      expect(pendingRows()).toBe(1);
      // Nobody told the indexer: its sweep finds it.
      await waitFor(() => (pendingRows() === 0 ? true : undefined), 5000, "the pending rows indexed");
      expect(count(`SELECT COUNT(*) AS n FROM "ConversationSearchEntry" WHERE "messageId" = 'swept-0'`)).toBe(1);
      expect((await search('another connection')).ids).toContain('swept');
    } finally {
      await indexer.stop();
      db.close();
    }
  });
});
