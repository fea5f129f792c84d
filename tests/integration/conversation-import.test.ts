import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ABANDONED_AFTER_MS, IMPORTING_OWNER } from '../../src/core/chat-store/sqlite-whole-conversation.js';
import { describeOnDatabases, type TestDatabase } from '../helpers/databases.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// Imports bounded and never seen in part (issue 20): MAX_IMPORT_MESSAGES (default 10,000) holds,
// more is 400 before anything is stored; the largest import is stored whole; a reader polling
// while it is written sees it whole or not at all.

const MAX = 10_000;

function messages(count: number, tag: string): { role: string; content: string }[] {
  return Array.from({ length: count }, (_, index) => ({ role: index % 2 === 0 ? 'user' : 'assistant', content: `${tag} message ${index}` }));
}

/** Rows in the database itself, whoever owns them: what "stores nothing" means. */
async function rowCounts(database: TestDatabase): Promise<{ conversations: number; messages: number }> {
  const sql = `SELECT (SELECT COUNT(*) FROM "Conversation") AS conversations, (SELECT COUNT(*) FROM "Message") AS messages`;
  if (database.kind === 'sqlite') {
    const db = new Database(database.url.slice('file:'.length), { readonly: true });
    try {
      return db.prepare<[], { conversations: number; messages: number }>(sql).get() ?? { conversations: -1, messages: -1 };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const row = (await client.query<{ conversations: string; messages: string }>(sql)).rows[0];
    return { conversations: Number(row?.conversations), messages: Number(row?.messages) };
  } finally {
    await client.end();
  }
}

describeOnDatabases('conversation import', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  it('refuses MAX_IMPORT_MESSAGES + 1 messages with 400 naming the limit, and stores nothing', async () => {
    const before = await rowCounts(svc.database);
    const reply = await svc.request('POST', '/api/conversation/save', { json: { title: 'too many', conversationData: { messages: messages(MAX + 1, 'over') } } });
    const error = expectEnvelope(reply, 400, 'INVALID_REQUEST');
    expect(error.details.maxMessages).toBe(MAX);
    expect(error.details.issues).toEqual([{ path: ['conversationData', 'messages'], message: expect.stringContaining(`at most ${MAX} messages`) }]);
    expect(await rowCounts(svc.database)).toEqual(before);
  });

  it('stores an import of exactly MAX_IMPORT_MESSAGES whole, in order', async () => {
    const sent = messages(MAX, 'whole');
    const reply = await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages: sent, metadata: { source: 'test' } } } });
    expect(reply.status, reply.text).toBe(200);
    const stored = await svc.request('GET', `/api/conversation/${reply.body.conversationId as string}`);
    expect(stored.status).toBe(200);
    const body = stored.body as { conversation: { title: string; messageCount: number }; metadata: unknown; messages: { role: string; content: string }[] };
    expect(body.conversation.title).toBe('whole message 0');
    expect(body.conversation.messageCount).toBe(MAX);
    expect(body.metadata).toEqual({ source: 'test' });
    expect(body.messages.map(({ role, content }) => ({ role, content }))).toEqual(sent);
  });

  it('is never seen in part: a reader polling the list and each listed conversation during the import sees it whole or not at all', async () => {
    const seen: number[] = [];
    const state = { importing: true };
    const importing = () => state.importing;
    let pollsDuringImport = 0;
    const reader = (async () => {
      while (importing()) {
        const list = await svc.request('GET', '/api/conversations?limit=100');
        expect(list.status).toBe(200);
        for (const summary of list.body.conversations as { id: string; messageCount: number; title: string }[]) {
          if (summary.title !== 'watched') continue;
          expect(summary.messageCount).toBe(MAX);
          const one = await svc.request('GET', `/api/conversation/${summary.id}`);
          expect(one.status).toBe(200);
          seen.push((one.body.messages as unknown[]).length);
        }
        if (importing()) pollsDuringImport++;
      }
    })();
    const reply = await svc.request('POST', '/api/conversation/save', { json: { title: 'watched', conversationData: { messages: messages(MAX, 'watched') } } });
    state.importing = false;
    await reader;
    expect(reply.status, reply.text).toBe(200);
    // The reader really ran beside the import, not only before or after it.
    expect(pollsDuringImport).toBeGreaterThan(1);
    // Every time it was seen, it was whole (a failure lists each sighting's message count).
    expect(seen.filter((count) => count !== MAX)).toEqual([]);
  });

  it('keeps a limit set lower: MAX_IMPORT_MESSAGES=3 refuses four messages and stores three', async () => {
    await using small = await startTestService(kind, { MAX_IMPORT_MESSAGES: '3' });
    const refused = expectEnvelope(
      await small.request('POST', '/api/conversation/save', { json: { conversationData: { messages: messages(4, 'four') } } }),
      400,
      'INVALID_REQUEST',
    );
    expect(refused.details.maxMessages).toBe(3);
    const stored = await small.request('POST', '/api/conversation/save', { json: { conversationData: { messages: messages(3, 'three') } } });
    expect(stored.status).toBe(200);
    expect((await small.request('GET', '/api/conversations')).body.total).toBe(1);
  });
});

describeOnDatabases('conversation import left behind', (kind) => {
  it.runIf(kind === 'sqlite')('an import that died part way stays invisible, and a later import removes it once it is old', async () => {
    await using svc = await startTestService(kind);
    const path = svc.database.url.slice('file:'.length);
    const db = new Database(path);
    try {
      // What a process killed part way leaves: an unowned conversation with some of its messages.
      const old = new Date(Date.now() - ABANDONED_AFTER_MS - 60_000).toISOString().replace('Z', '+00:00');
      const recent = new Date().toISOString().replace('Z', '+00:00');
      const leave = db.prepare(
        `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES (?, ?, 'half', 4, 4, ?, ?)`,
      );
      const message = db.prepare(`INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt") VALUES (?, ?, ?, 'user', 'x', 0, ?)`);
      for (const [id, at] of [
        ['a4a4a4a4-0000-4000-8000-000000000001', old],
        ['a4a4a4a4-0000-4000-8000-000000000002', recent],
      ] as const) {
        leave.run(id, IMPORTING_OWNER, at, at);
        message.run(id.replace('a4a4a4a4', 'c6c6c6c6'), id, 0, at);
      }
      expect((await svc.request('GET', '/api/conversations')).body.total).toBe(0);
      expect((await svc.request('GET', '/api/conversation/a4a4a4a4-0000-4000-8000-000000000002')).status).toBe(404);
      const reply = await svc.request('POST', '/api/conversation/save', { json: { conversationData: { messages: messages(2, 'later') } } });
      expect(reply.status).toBe(200);
      const left = db.prepare<[string], { id: string }>(`SELECT id FROM "Conversation" WHERE "ownerId" = ? ORDER BY id`).all(IMPORTING_OWNER);
      // The old one was swept with its messages; the recent one may still be under way elsewhere.
      expect(left.map((row) => row.id)).toEqual(['a4a4a4a4-0000-4000-8000-000000000002']);
      expect(db.prepare(`SELECT COUNT(*) AS n FROM "Message" WHERE "conversationId" = 'a4a4a4a4-0000-4000-8000-000000000001'`).get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it.runIf(kind === 'postgresql')('an import that fails part way leaves nothing (one transaction)', async () => {
    await using svc = await startTestService(kind);
    // A NUL cannot be stored in PostgreSQL text: sent straight to the store, the second batch fails.
    const rows = [...messages(1500, 'fine').map((message) => ({ ...message, toolCalls: null })), { role: 'user', content: 'bad\u0000', toolCalls: null }];
    await expect(
      svc.service.deps.store.chat.insertConversation({ id: 'b5b5b5b5-0000-4000-8000-000000000001', ownerId: 'local', title: 'half', metadata: '{}', messageCount: rows.length, messages: rows }),
    ).rejects.toThrow();
    expect(await rowCounts(svc.database)).toEqual({ conversations: 0, messages: 0 });
  });
});
