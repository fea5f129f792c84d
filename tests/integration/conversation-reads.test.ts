import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Prisma } from '../../src/generated/sqlite/client.js';
import { toMessageView, toSummary } from '../../src/core/conversations/conversation-views.js';
import { createDatabase, type Database } from '../../src/core/db/create-db.js';
import { migrate } from '../../src/core/db/migrate.js';
import { newId } from '../../src/core/ids.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';

// The conversation list and messages are read with driver statements (src/core/chat-store/
// *-conversation-reads.ts). These tests hold them, on both databases, to what Prisma's query
// engine answers for the same question: the same rows, order, totals, dates and JSON values.

describeOnDatabases('conversation reads', (kind) => {
  let database: TestDatabase;
  let opened: Database;
  const owner = 'reader';
  const conversations: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    await migrate(database.url);
    opened = await createDatabase(database.url, 'instance-reads');
    const titles = ['Plans for 100% coverage', 'snake_case names', 'UPPER case', '', 'émigré café', 'back\\slash', 'plain'];
    const base = Date.UTC(2026, 0, 1);
    for (const [index, title] of titles.entries()) {
      const id = newId();
      conversations.push(id);
      await opened.db.conversation.create({
        data: {
          id,
          ownerId: owner,
          title,
          messageCount: index === 3 ? 0 : 2,
          nextSeq: 2,
          metadata: index === 0 ? { source: 'import', nested: { a: [1, 2] } } : undefined,
          createdAt: new Date(base + index * 1000),
          // Two share a lastModified, so the id decides their order.
          lastModified: new Date(base + (index === 2 ? 5 : index) * 60_000 + 123),
          messages: {
            create: [
              { id: newId(), seq: 0, role: 'user', content: `Question ${index} with a Needle_${index % 2}`, createdAt: new Date(base + index) },
              {
                id: newId(),
                seq: 1,
                role: 'assistant',
                content: `Answer ${index}`,
                model: 'gpt-4o-mini',
                provider: 'openai',
                finishReason: 'stop',
                usage: { inputTokens: 3, outputTokens: 4 },
                toolCalls: index === 1 ? [{ id: 'call-1', name: 'read_file', arguments: { path: 'a.txt' }, result: { ok: true } }] : undefined,
                createdAt: new Date(base + index + 1),
              },
            ],
          },
        },
      });
    }
    // Another user's and an empty untitled conversation are never listed.
    await opened.db.conversation.create({ data: { id: newId(), ownerId: 'someone-else', title: 'Plans too', messageCount: 1 } });
  });

  afterAll(async () => {
    await opened.close();
    await database.drop();
  });

  /** Prisma's case-insensitive `contains`: SQLite's LIKE folds ASCII case already. */
  const containsText = (text: string) => (kind === 'postgresql' ? { contains: text, mode: 'insensitive' as const } : { contains: text });

  /** The list as Prisma's query engine answers it, as the service asked it before. */
  async function prismaList(limit: number, offset: number, text?: string) {
    const where: Prisma.ConversationWhereInput = {
      ownerId: owner,
      OR: [{ messageCount: { gt: 0 } }, { title: { not: '' } }],
      ...(text ? { AND: [{ OR: [{ title: containsText(text) }, { messages: { some: { content: containsText(text) } } }] }] } : {}),
    };
    const rows = await opened.db.conversation.findMany({ where, orderBy: [{ lastModified: 'desc' }, { id: 'asc' }], skip: offset, take: limit });
    return { rows: rows.map(toSummary), total: await opened.db.conversation.count({ where }) };
  }

  async function readsList(limit: number, offset: number, text?: string) {
    const { rows, total } = await opened.reads.list({ ownerId: owner, limit, offset, text });
    return { rows: rows.map(toSummary), total };
  }

  it('lists pages and totals as Prisma does, newest first with ties ordered by id', async () => {
    for (const [limit, offset] of [[50, 0], [2, 0], [2, 2], [3, 5], [10, 100]] as const) {
      expect(await readsList(limit, offset), `limit ${limit} offset ${offset}`).toEqual(await prismaList(limit, offset));
    }
    expect((await readsList(50, 0)).total).toBe(conversations.length - 1);
  });

  it('searches titles and messages ignoring ASCII case, as Prisma does', async () => {
    for (const text of ['plans', 'NEEDLE_1', 'café', 'nothing here', 'answer 4', 'Question 6 WITH']) {
      expect(await readsList(50, 0, text), text).toEqual(await prismaList(50, 0, text));
    }
  });

  it('takes LIKE wildcards literally, where Prisma lets `_` and `%` match anything', async () => {
    const titles = async (text: string) => (await readsList(50, 0, text)).rows.map((row) => row.title);
    expect(await titles('_case')).toEqual(['snake_case names']);
    expect(await titles('%')).toEqual(['Plans for 100% coverage']);
    expect(await titles('back\\slash')).toEqual(['back\\slash']);
    expect((await prismaList(50, 0, '_case')).total).toBe(2);
  });

  it('finds a conversation with its owner and metadata, and reads its messages as Prisma does', async () => {
    for (const id of conversations) {
      const byPrisma = await opened.db.conversation.findUniqueOrThrow({ where: { id } });
      const found = await opened.reads.find(id);
      expect(found && { ...toSummary(found), ownerId: found.ownerId, metadata: found.metadata }).toEqual({
        ...toSummary(byPrisma),
        ownerId: byPrisma.ownerId,
        metadata: byPrisma.metadata,
      });
      const messages = await opened.db.message.findMany({ where: { conversationId: id }, orderBy: { seq: 'asc' } });
      expect((await opened.reads.messages(id)).map(toMessageView)).toEqual(messages.map(toMessageView));
    }
    expect(await opened.reads.find(newId())).toBeNull();
    expect(await opened.reads.messages(newId())).toEqual([]);
  });
});
