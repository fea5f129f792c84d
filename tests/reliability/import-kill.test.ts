import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { expect, it } from 'vitest';
import { IMPORTING_OWNER } from '../../src/core/chat-store/sqlite-whole-conversation.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { spawnService, type ChildService } from '../helpers/child-service.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';
import { request } from '../helpers/test-service.js';
import { waitFor } from '../helpers/wait-for.js';

// Issue 20: an import is written in steps so the service keeps answering meanwhile; a kill -9 in
// the middle of one must leave no conversation anyone can see in part. The kill waits until the
// import is seen under way in the database itself: on SQLite its messages written so far (under
// an owner no reader asks for), on PostgreSQL its transaction inserting messages.

const MESSAGES = 10_000;

/** True once the service's import is part way: some messages stored, not yet all. */
async function importUnderWay(database: TestDatabase): Promise<boolean> {
  if (database.kind === 'sqlite') {
    const db = new BetterSqlite3(sqliteFilePath(database.url), { readonly: true });
    try {
      const row = db
        .prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM "Message" m JOIN "Conversation" c ON c.id = m."conversationId" WHERE c."ownerId" = ?`)
        .get(IMPORTING_OWNER);
      return (row?.n ?? 0) > 0;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const result = await client.query(
      `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%INSERT INTO "Message"%unnest%'`,
    );
    return result.rowCount !== null && result.rowCount > 0;
  } finally {
    await client.end();
  }
}

describeOnDatabases('kill -9 during an import', (kind) => {
  it('leaves no conversation visible in part, and the next import after the restart is whole', async () => {
    const database = await createTestDatabase(kind);
    const env = { DATABASE_URL: database.url };
    const messages = Array.from({ length: MESSAGES }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `kill ${index}` }));
    let service: ChildService | undefined;
    try {
      service = await spawnService(env);
      const importing = request(service.url, 'POST', '/api/conversation/save', { json: { title: 'cut', conversationData: { messages } } }).then(
        (reply) => reply.status,
        () => 'connection lost' as const,
      );
      await waitFor(async () => ((await importUnderWay(database)) ? true : undefined), 20_000, 'the import to be under way');
      service.child.kill('SIGKILL');
      await service.exit;
      // Answered before the kill would mean the kill did not land mid-import.
      expect(await importing).toBe('connection lost');

      service = await spawnService(env);
      const listed = await request(service.url, 'GET', '/api/conversations?limit=100');
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(0);
      const searched = await request(service.url, 'GET', '/api/conversations?q=kill%201');
      expect(searched.body.total).toBe(0);

      const again = await request(service.url, 'POST', '/api/conversation/save', { json: { title: 'whole', conversationData: { messages } } });
      expect(again.status, again.text).toBe(200);
      const stored = await request(service.url, 'GET', `/api/conversation/${again.body.conversationId as string}`);
      expect(stored.body.messages).toHaveLength(MESSAGES);
      expect((await request(service.url, 'GET', '/api/conversations')).body.total).toBe(1);
    } finally {
      if (service && service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exit;
      }
      await database.drop();
    }
  }, 120_000);
});
