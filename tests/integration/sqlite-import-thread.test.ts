import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { IMPORTING_OWNER } from '../../src/core/chat-store/sqlite-whole-conversation.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { describeOnDatabases } from '../helpers/databases.js';
import { startTestService } from '../helpers/test-service.js';

// On SQLite a long conversation is written by a thread of its own, in steps that each commit
// (sqlite-import-thread.ts): a step that fails part way must take every earlier step's rows with
// it, search index entries included, and a conversation written there must be readable through
// the service's own connections the moment the write resolves.

function rows(count: number, tag: string) {
  return Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `${tag} ${index}`, toolCalls: null }));
}

function counts(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare<[], { conversations: number; messages: number; searchEntries: number }>(
        `SELECT (SELECT COUNT(*) FROM "Conversation") AS conversations, (SELECT COUNT(*) FROM "Message") AS messages,
                (SELECT COUNT(*) FROM "ConversationSearchEntry") AS searchEntries`,
      )
      .get();
  } finally {
    db.close();
  }
}

describeOnDatabases('SQLite import thread', (kind) => {
  it.runIf(kind === 'sqlite')('a write that fails after several steps leaves nothing, and the thread goes on with the next one', async () => {
    await using svc = await startTestService(kind);
    const path = sqliteFilePath(svc.database.url);
    const before = counts(path);
    // A row SQLite refuses, after 6,000 good ones: the write fails many commits in.
    const poison = new Database(path);
    try {
      poison.exec(`CREATE TRIGGER "test_poison" BEFORE INSERT ON "Message" WHEN new.content = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END`);
    } finally {
      poison.close();
    }
    const broken = [...rows(6000, 'fine'), { role: 'user', content: 'poison', toolCalls: null }, ...rows(10, 'after')];
    const chat = svc.service.deps.store.chat;
    await expect(
      chat.insertConversation({ id: 'd7d7d7d7-0000-4000-8000-000000000001', ownerId: 'local', title: 'half', metadata: '{}', messageCount: broken.length, messages: broken }),
    ).rejects.toThrow('poisoned row');
    expect(counts(path)).toEqual(before);

    const good = rows(3000, 'whole');
    await chat.insertConversation({ id: 'd7d7d7d7-0000-4000-8000-000000000002', ownerId: 'local', title: 'whole', metadata: '{}', messageCount: good.length, messages: good });
    // Read at once through the service's connections: the last commit is done when the write resolves.
    const stored = await svc.request('GET', '/api/conversation/d7d7d7d7-0000-4000-8000-000000000002');
    expect(stored.status).toBe(200);
    expect((stored.body.messages as { content: string }[]).map((message) => message.content)).toEqual(good.map((row) => row.content));
    const found = await svc.request('GET', '/api/conversations?q=whole%202999');
    expect(found.body.total).toBe(1);
    const db = new Database(path, { readonly: true });
    try {
      expect(db.prepare(`SELECT COUNT(*) AS n FROM "Conversation" WHERE "ownerId" = ?`).get(IMPORTING_OWNER)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  }, 60_000);
});
