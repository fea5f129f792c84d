import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ChatStore } from '../../src/core/chat-store/chat-store.js';
import { PostgresChatStore } from '../../src/core/chat-store/postgres-chat-store.js';
import { createDatabase, sqliteFilePath, type Database } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { listConversations } from '../../src/core/conversations/list-conversations.js';
import { closeInterruptedAnswers } from '../../src/core/conversations/close-interrupted-answers.js';
import { newId } from '../../src/core/ids.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';

// The chat store writes the rows Prisma owns with its own SQL (src/core/chat-store). These tests
// hold it to Prisma's encoding on both databases: what it writes, Prisma reads back exactly
// (dates, JSON, booleans, ordering), and what Prisma writes, it reads.

const target = { provider: 'openai', model: 'gpt-4o-mini' };

describeOnDatabases('chat store', (kind) => {
  let database: TestDatabase;
  let opened: Database;
  let chat: ChatStore;

  beforeEach(async () => {
    database = await createTestDatabase(kind);
    await migrate(database.url);
    opened = await createDatabase(database.url, 'instance-a');
    chat = opened.chat;
  });

  afterEach(async () => {
    await opened.close();
    await database.drop();
  });

  const question = (conversationId: string | null, content: string, historyLimit = 50) =>
    chat.recordQuestion({ userId: 'ann', conversationId, content, defaultTitle: content.slice(0, 10), historyLimit });

  it('stores a question in a new conversation that becomes current, as Prisma reads it', async () => {
    const before = Date.now();
    const recorded = await question(null, 'First question here');
    expect(recorded).toEqual({
      conversation: { id: expect.any(String), ownerId: 'ann', title: 'First ques', messageCount: 1 },
      history: [],
    });
    const id = recorded?.conversation.id ?? '';
    const row = await opened.db.conversation.findUniqueOrThrow({ where: { id }, include: { messages: true } });
    expect(row).toMatchObject({ ownerId: 'ann', title: 'First ques', messageCount: 1, nextSeq: 1, metadata: null });
    expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(before - 5);
    expect(row.lastModified.getTime()).toBeLessThanOrEqual(Date.now() + 5);
    expect(row.messages).toEqual([
      expect.objectContaining({ seq: 0, role: 'user', content: 'First question here', streaming: false, toolCalls: null, finishReason: null }),
    ]);
    expect(await opened.db.userState.findUnique({ where: { userId: 'ann' } })).toMatchObject({ currentConversationId: id });
  });

  it('grows and closes an answer: streaming until closed, tool calls and usage as JSON, metadata merged', async () => {
    const id = (await question(null, 'q'))?.conversation.id ?? '';
    await opened.db.conversation.update({ where: { id }, data: { metadata: { source: 'import', provider: 'old' } } });
    const messageId = await chat.openAnswer(id, target, { content: 'Wo', toolCalls: [] });
    expect(messageId).toEqual(expect.any(String));
    const growing = await opened.db.message.findUniqueOrThrow({ where: { id: messageId ?? '' } });
    expect(growing).toMatchObject({
      seq: 1,
      role: 'assistant',
      content: 'Wo',
      toolCalls: null,
      streaming: true,
      writer: 'instance-a',
      provider: 'openai',
      model: 'gpt-4o-mini',
    });

    const calls = [{ id: 'c1', name: 'list_files', params: { path: '.' }, result: { entries: [] } }];
    await chat.saveAnswer(messageId ?? '', { content: 'Partial', toolCalls: calls });
    expect(await opened.db.message.findUniqueOrThrow({ where: { id: messageId ?? '' } })).toMatchObject({ content: 'Partial', toolCalls: calls, streaming: true });

    const stored = await chat.closeAnswer(messageId, id, 'ann', { content: 'Whole answer', toolCalls: calls, finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4 } }, target);
    expect(stored).toEqual({ messageId, context: { conversation: { id, ownerId: 'ann', title: 'q', messageCount: 2 }, workspace: null, activeModel: null } });
    const closed = await opened.db.message.findUniqueOrThrow({ where: { id: messageId ?? '' } });
    expect(closed).toMatchObject({ content: 'Whole answer', toolCalls: calls, finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 4 }, streaming: false });
    const conversation = await opened.db.conversation.findUniqueOrThrow({ where: { id } });
    // The import's own keys stay; the last answer's names replace older ones.
    expect(conversation.metadata).toEqual({ source: 'import', provider: 'openai', model: 'gpt-4o-mini' });
    expect(conversation).toMatchObject({ messageCount: 2, nextSeq: 2 });
  });

  it("closes the answers left streaming by dead writers, not a live instance's or its own", async () => {
    const open = async (title: string) => {
      const id = (await question(null, title))?.conversation.id ?? '';
      return (await chat.openAnswer(id, target, { content: 'Half', toolCalls: [] })) ?? '';
    };
    const own = await open('own');
    const [live, dead, legacy] = [await open('live'), await open('dead'), await open('legacy')];
    await opened.db.message.update({ where: { id: live }, data: { writer: 'instance-b' } });
    await opened.db.message.update({ where: { id: dead }, data: { writer: 'instance-c' } });
    await opened.db.message.update({ where: { id: legacy }, data: { writer: null } });
    const store = { db: opened.db, chat, reads: opened.reads, usageSql: opened.usageSql, kind };
    // Redis cannot tell about instance-b this time: it is left for the next run.
    const unsure = (writer: string) => (writer === 'instance-b' ? Promise.reject(new Error('redis down')) : Promise.resolve(false));
    expect(await closeInterruptedAnswers(store, 'instance-a', unsure)).toBe(2);
    const states = async () =>
      Object.fromEntries(
        (await opened.db.message.findMany({ where: { id: { in: [own, live, dead, legacy] } } })).map((row) => [
          row.id === own ? 'own' : row.id === live ? 'live' : row.id === dead ? 'dead' : 'legacy',
          `${String(row.streaming)} ${String(row.finishReason)} ${row.content}`,
        ]),
      );
    expect(await states()).toEqual({ own: 'true null Half', live: 'true null Half', dead: 'false error Half', legacy: 'false error Half' });
    expect(await closeInterruptedAnswers(store, 'instance-a', (writer) => Promise.resolve(writer === 'instance-b'))).toBe(0);
    // Without other instances (no Redis), a fresh start closes everything left, even its own id's.
    expect(await closeInterruptedAnswers(store, 'instance-d')).toBe(2);
    expect(await states()).toMatchObject({ own: 'false error Half', live: 'false error Half' });
  });

  it('stores an answer that needed no row while it grew in one go, whole and closed', async () => {
    const id = (await question(null, 'quick'))?.conversation.id ?? '';
    const answer = { content: 'Done.', toolCalls: [], finishReason: 'length', usage: { inputTokens: 1, outputTokens: 2 } };
    const stored = await chat.closeAnswer(null, id, 'ann', answer, target);
    expect(stored.context.conversation).toEqual({ id, ownerId: 'ann', title: 'quick', messageCount: 2 });
    const rows = await opened.db.message.findMany({ where: { conversationId: id }, orderBy: { seq: 'asc' } });
    expect(rows.map((row) => row.role)).toEqual(['user', 'assistant']);
    expect(rows[1]).toMatchObject({
      id: stored.messageId,
      seq: 1,
      content: 'Done.',
      toolCalls: null,
      finishReason: 'length',
      usage: { inputTokens: 1, outputTokens: 2 },
      streaming: false,
      provider: 'openai',
      model: 'gpt-4o-mini',
    });
    expect((await opened.db.conversation.findUniqueOrThrow({ where: { id } })).metadata).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
  });

  it('returns the history window before the question, oldest first, with stored tool calls', async () => {
    const id = (await question(null, 'u1'))?.conversation.id ?? '';
    const calls = [{ id: 'c1', name: 'git_status', params: {}, result: { status: 'clean' } }];
    await chat.closeAnswer(null, id, 'ann', { content: 'a1', toolCalls: calls, finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } }, target);
    await question(id, 'u2');
    const recorded = await question(id, 'u3', 2);
    expect(recorded?.history).toEqual([
      { role: 'assistant', content: 'a1', toolCalls: calls },
      { role: 'user', content: 'u2', toolCalls: null },
    ]);
    expect(recorded?.conversation).toMatchObject({ messageCount: 4, title: 'u1' });
    expect((await question(id, 'u4', 0))?.history).toEqual([]);
  });

  it('reaches back past deleted and superseded messages for a full history window', async () => {
    const id = (await question(null, 'm0'))?.conversation.id ?? '';
    for (let n = 1; n < 12; n++) await question(id, `m${n}`);
    // Seqs 0–11 stored. The last eight are gone from the history: four deleted, four superseded;
    // so the newest two in force (m2, m3) lie far outside the twice-the-limit window behind seq 12.
    await opened.db.message.deleteMany({ where: { conversationId: id, seq: { in: [4, 6, 8, 10] } } });
    await opened.db.message.updateMany({ where: { conversationId: id, seq: { in: [5, 7, 9, 11] } }, data: { supersededBy: 'later' } });
    expect((await question(id, 'm12', 2))?.history.map((m) => m.content)).toEqual(['m2', 'm3']);
    // With enough in force inside the window, only those are read; the limit holds either way.
    expect((await question(id, 'm13', 1))?.history.map((m) => m.content)).toEqual(['m12']);
    expect((await question(id, 'm14', 50))?.history.map((m) => m.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm12', 'm13']);
  });

  it('reads the setup: named or current conversation, prompt order, active model, active workspace', async () => {
    expect(await chat.readSetup({ userId: 'ann' })).toEqual({ conversation: null, activeModel: null, promptSections: null, workspace: null });
    const id = (await question(null, 'hello'))?.conversation.id ?? '';
    const sections = [{ type: 'user_message', enabled: true }];
    const orderId = newId();
    await opened.db.promptOrder.create({ data: { id: orderId, name: 'named', sections } });
    await opened.db.promptOrder.create({ data: { id: newId(), name: 'default', sections: [{ type: 'system', content: 'Hi', enabled: true }], isDefault: true } });
    // The service default (CONTRACT §12): every user who never chose a model of their own.
    await opened.db.setting.upsert({ where: { key: 'defaultModel' }, create: { key: 'defaultModel', value: { name: 'qwen', provider: 'ollama' } }, update: {} });
    const first = await opened.db.workspace.create({ data: { id: newId(), name: 'one', path: '/srv/one', branch: 'main', status: 'clean', createdAt: new Date(1000) } });
    const second = await opened.db.workspace.create({ data: { id: newId(), name: 'two', path: '/srv/two', createdAt: new Date(2000) } });

    const current = await chat.readSetup({ userId: 'ann' });
    expect(current).toEqual({
      conversation: { id, ownerId: 'ann', title: 'hello', messageCount: 1 },
      activeModel: { name: 'qwen', provider: 'ollama' },
      promptSections: [{ type: 'system', content: 'Hi', enabled: true }],
      // Never chose one: the first registered.
      workspace: { id: first.id, name: 'one', path: '/srv/one', branch: 'main', status: 'clean', device: null, inode: null, gitEntries: null },
    });
    await opened.db.userState.update({ where: { userId: 'ann' }, data: { activeWorkspaceId: second.id } });
    const named = await chat.readSetup({ userId: 'ann', conversationId: id, promptOrderId: orderId });
    expect(named.promptSections).toEqual(sections);
    expect(named.workspace?.id).toBe(second.id);
    // Another user's current conversation is not ann's; an unknown order is null (the engine's 400).
    expect((await chat.readSetup({ userId: 'bob', promptOrderId: 'nope' })).promptSections).toBeNull();
    expect((await chat.readSetup({ userId: 'bob' })).conversation).toBeNull();

    // ann's own model is hers alone: the setup and the context read it, bob still has the default.
    await opened.db.userState.update({ where: { userId: 'ann' }, data: { activeModel: { name: 'gpt-4o', provider: 'openai' } } });
    expect((await chat.readSetup({ userId: 'ann' })).activeModel).toEqual({ name: 'gpt-4o', provider: 'openai' });
    expect((await chat.readContext('ann', id)).activeModel).toEqual({ name: 'gpt-4o', provider: 'openai' });
    expect((await chat.readSetup({ userId: 'bob' })).activeModel).toEqual({ name: 'qwen', provider: 'ollama' });
    expect((await chat.readContext('bob', id)).activeModel).toEqual({ name: 'qwen', provider: 'ollama' });
  });

  it('answers null for a conversation deleted meanwhile, and keeps the list order Prisma reads', async () => {
    const gone = (await question(null, 'gone'))?.conversation.id ?? '';
    await opened.db.conversation.delete({ where: { id: gone } });
    expect(await question(gone, 'again')).toBeNull();
    expect(await chat.openAnswer(gone, target, { content: '', toolCalls: [] })).toBeNull();
    const unstored = await chat.closeAnswer(null, gone, 'ann', { content: 'x', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } }, target);
    expect(unstored.messageId).toBeNull();
    expect(await opened.db.message.count({ where: { conversationId: gone } })).toBe(0);

    // Prisma's write, then the chat store's: newest first either way, whoever wrote the date.
    const older = (await question(null, 'older'))?.conversation.id ?? '';
    await new Promise((resolve) => setTimeout(resolve, 5));
    const byPrisma = newId();
    await opened.db.conversation.create({ data: { id: byPrisma, ownerId: 'ann', title: 'by prisma', messageCount: 1 } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await question(older, 'touched again');
    const listed = await listConversations({ db: opened.db, chat, reads: opened.reads, usageSql: opened.usageSql, kind }, 'ann', { limit: 10, offset: 0 });
    expect(listed.conversations.map((conversation) => conversation.id)).toEqual([older, byPrisma]);
  });

  it('makes the conversation current: for a new user, on a switch, and leaves the row alone when it is already', async () => {
    const first = (await question(null, 'one'))?.conversation.id ?? '';
    const state = () => opened.db.userState.findUniqueOrThrow({ where: { userId: 'ann' } });
    expect(await state()).toMatchObject({ currentConversationId: first });
    const second = (await question(null, 'two'))?.conversation.id ?? '';
    expect(await state()).toMatchObject({ currentConversationId: second });
    const switched = await state();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await question(second, 'again');
    // Unchanged: not rewritten (its time is the switch's).
    expect(await state()).toEqual(switched);
    await question(first, 'back');
    expect(await state()).toMatchObject({ currentConversationId: first });
    expect((await state()).updatedAt.getTime()).toBeGreaterThan(switched.updatedAt.getTime());
  });

  if (kind === 'postgresql') {
    it("does not queue a user's questions on the user's row when the conversation is current already", async () => {
      const id = (await question(null, 'first'))?.conversation.id ?? '';
      const other = (await question(null, 'other'))?.conversation.id ?? '';
      await question(id, 'current again');
      // Another transaction holds the user's row, as an exchange's commit waiting on its WAL flush does.
      const holder = new pg.Client({ connectionString: database.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "UserState" WHERE "userId" = 'ann' FOR UPDATE`);
        const inCurrent = await Promise.race([question(id, 'goes on').then(() => 'stored'), new Promise((resolve) => setTimeout(resolve, 2000, 'waited'))]);
        expect(inCurrent).toBe('stored');
        // A switch must change the row, so it waits for the holder, then writes.
        let switchedAt = 0;
        const switching = question(other, 'switches').then(() => (switchedAt = Date.now()));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(switchedAt).toBe(0);
        const releasedAt = Date.now();
        await holder.query('COMMIT');
        await switching;
        expect(switchedAt).toBeGreaterThanOrEqual(releasedAt);
        expect(await opened.db.userState.findUniqueOrThrow({ where: { userId: 'ann' } })).toMatchObject({ currentConversationId: other });
      } finally {
        await holder.end();
      }
    });

    it("a new user's first question racing another write of the user's row still makes its conversation current, and keeps that write", async () => {
      // Another procedure (a workspace switch) creates the user's row and commits while the
      // question runs: the row is not in the question's snapshot, so its insert finds it only then.
      const holder = new pg.Client({ connectionString: database.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`INSERT INTO "UserState" ("userId", "activeWorkspaceId", "updatedAt") VALUES ('ann', 'w1', now())`);
        let answered = false;
        const asking = question(null, 'first ever').then((recorded) => ((answered = true), recorded));
        // The question waits on the uncommitted row (its insert's conflict), its snapshot taken.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(answered).toBe(false);
        await holder.query('COMMIT');
        const id = (await asking)?.conversation.id ?? '';
        expect(id).not.toBe('');
        // Either order of the two would leave the conversation current and the workspace chosen.
        expect(await opened.db.userState.findUniqueOrThrow({ where: { userId: 'ann' } })).toMatchObject({ currentConversationId: id, activeWorkspaceId: 'w1' });
      } finally {
        await holder.end();
      }
    });

    it('answers 503 SERVICE_UNAVAILABLE when its database cannot be used', async () => {
      const url = new URL(database.url);
      url.pathname = '/assistant_test_no_such_database';
      const pool = new pg.Pool({ connectionString: url.toString() });
      try {
        await expect(new PostgresChatStore(pool, 'instance-a').readSetup({ userId: 'ann' })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
      } finally {
        await pool.end();
      }
    });
    return;
  }

  // SQLite's own concerns: the text of its dates, and the lock Prisma's connection and ours share.

  it('writes dates in the very text Prisma writes, so SQLite orders them as times', async () => {
    const byStore = (await question(null, 'store'))?.conversation.id ?? '';
    const byPrisma = newId();
    await opened.db.conversation.create({ data: { id: byPrisma, ownerId: 'ann' } });
    const raw = new BetterSqlite3(sqliteFilePath(database.url), { readonly: true });
    try {
      const dates = raw.prepare('SELECT id, "createdAt", "lastModified" FROM "Conversation"').all() as Record<string, string>[];
      const shape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;
      expect(dates.map((row) => row.id).sort()).toEqual([byStore, byPrisma].sort());
      for (const row of dates) {
        expect(row.createdAt).toMatch(shape);
        expect(row.lastModified).toMatch(shape);
      }
    } finally {
      raw.close();
    }
  });

  it('waits between turns while a Prisma transaction holds the write lock, then writes', async () => {
    const id = (await question(null, 'q'))?.conversation.id ?? '';
    let written: Promise<unknown> = Promise.resolve();
    let done = false;
    await opened.db.$transaction(async (tx) => {
      await tx.conversation.update({ where: { id }, data: { title: 'renamed inside' } });
      written = question(id, 'during').then(() => {
        done = true;
      });
      // The event loop keeps turning (this timer fires): the store is not blocked inside SQLite.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(done).toBe(false);
    });
    await written;
    expect(done).toBe(true);
    expect(await opened.db.conversation.findUniqueOrThrow({ where: { id } })).toMatchObject({ title: 'renamed inside', messageCount: 2 });
  });
});
