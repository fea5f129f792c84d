import { afterAll, beforeAll, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate, readMigrations } from '../../src/core/db/migrate.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { createTestDatabase, describeOnDatabases } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';

// GET /api/conversations?q=… and ?before=… (issue 20) on both databases, over HTTP: the search
// index follows every write, is filled from rows stored before it existed, never shows one
// user another's conversations, and hostile texts and cursors get a 200 or the 400 envelope.

describeOnDatabases('conversation search', (kind) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService(kind);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
  });

  const save = async (title: string, contents: string[]) => {
    const res = await svc.request('POST', '/api/conversation/save', {
      json: { title, conversationData: { messages: contents.map((content) => ({ role: 'user', content })) } },
    });
    expect(res.status).toBe(200);
    return res.body.conversationId as string;
  };
  const search = async (q: string, extra = '') => {
    const res = await svc.request('GET', `/api/conversations?q=${encodeURIComponent(q)}${extra}`);
    expect(res.status, res.text).toBe(200);
    return { ids: (res.body.conversations as { id: string }[]).map((c) => c.id), total: res.body.total as number, nextBefore: res.body.nextBefore as unknown };
  };

  it('follows every write: import, rename, a rewritten message, delete', async () => {
    const id = await save('Quarterly kumquat review', ['the pomegranate budget', 'ok']);
    expect((await search('KUMQUAT')).ids).toEqual([id]);
    expect((await search('Pomegranate')).ids).toEqual([id]);

    expect((await svc.request('POST', `/api/conversation/${id}/rename`, { json: { title: 'Annual persimmon review' } })).status).toBe(200);
    expect((await search('kumquat')).total).toBe(0);
    expect((await search('persimmon')).ids).toEqual([id]);

    // A growing answer is rewritten in place (the chat store's saveAnswer): the old text goes.
    const { store } = svc.service.deps;
    const message = await store.db.message.findFirstOrThrow({ where: { conversationId: id, seq: 0 } });
    await store.db.message.update({ where: { id: message.id }, data: { content: 'the tamarind budget' } });
    expect((await search('pomegranate')).total).toBe(0);
    expect((await search('tamarind')).ids).toEqual([id]);

    expect((await svc.request('DELETE', `/api/conversation/${id}`)).status).toBe(200);
    for (const gone of ['persimmon', 'tamarind', 'ok']) expect((await search(gone)).ids).not.toContain(id);
  });

  it('pages by cursor: nextBefore walks the same order as offset, at any depth, with the total on every page', async () => {
    await using own = await startTestService(kind);
    const ids: string[] = [];
    for (let index = 0; index < 7; index++) {
      const res = await own.request('POST', '/api/conversation/save', { json: { title: `Cursor walk ${index}`, conversationData: { messages: [{ role: 'user', content: 'walk' }] } } });
      ids.push(res.body.conversationId as string);
    }
    const byOffset = (await own.request('GET', '/api/conversations?limit=200')).body.conversations.map((c: { id: string }) => c.id) as string[];
    expect([...byOffset].sort()).toEqual([...ids].sort());
    for (const q of ['', '&q=walk', '&q=wa']) {
      const walked: string[] = [];
      let before: string | undefined;
      for (let page = 0; page < 10; page++) {
        const res = await own.request('GET', `/api/conversations?limit=3${q}${before ? `&before=${before}` : ''}`);
        expect(res.status).toBe(200);
        expect(res.body.total).toBe(7);
        walked.push(...(res.body.conversations as { id: string }[]).map((c) => c.id));
        before = res.body.nextBefore as string | undefined;
        if (before === undefined) break;
      }
      expect(walked, q).toEqual(byOffset);
    }
    const deep = await own.request('GET', '/api/conversations?offset=10000000');
    expect(deep.status).toBe(200);
    expect(deep.body).toEqual({ conversations: [], total: 7 });
  });

  it('refuses a cursor it did not write with the 400 envelope', async () => {
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const before of ['x', '%00', 'not base64 !', forged(['yesterday', 'id']), forged(['2026-01-01T00:00:00.000Z']), forged(['2026-01-01T00:00:00.000Z', 'a\u0000b']), forged({ a: 1 }), 'A'.repeat(401)]) {
      const res = await svc.request('GET', `/api/conversations?before=${encodeURIComponent(before)}`);
      expectEnvelope(res, 400, 'INVALID_REQUEST');
    }
  });

  it('answers hostile texts with a 200 or the 400 envelope, never a 500', async () => {
    await save('Hostile corpus', ['100% of a_b \\ [x] (y) *z* ? ^$ .* "q" \'r\' 🎉']);
    const ok = ['%', '%%%%', '_', '____', '\\', '\\\\\\', '*', '[', ']', '[^]', '(', '((((((', '.*', '***:', '(?i)a', '"', '""', "'", 'NEAR(a b)', 'a OR b', '-', '+', '🎉', '\u{10FFFF}', ' '.repeat(500), '%'.repeat(500), 'é'.repeat(500), '🎉'.repeat(250)];
    for (const q of ok) {
      const res = await svc.request('GET', `/api/conversations?q=${encodeURIComponent(q)}`);
      expect(res.status, `${JSON.stringify(q)}: ${res.text}`).toBe(200);
      expect(typeof res.body.total).toBe('number');
    }
    expect((await search('%')).total).toBe(1);
    expect((await search('[x]')).total).toBe(1);
    expect((await search('.*')).total).toBe(1);
    expect((await search('%%')).total).toBe(0);
    // Raw bytes in the URL that are not UTF-8 (a lone surrogate's encoding, a NUL, an overlong form).
    for (const raw of ['%ED%A0%80', '%ED%A0%80abc', '%FF%FE', '%C0%80', 'a%00b', '%00']) {
      const res = await svc.request('GET', `/api/conversations?q=${raw}`);
      if (res.status !== 200) expectEnvelope(res, 400, 'INVALID_REQUEST');
    }
    expectEnvelope(await svc.request('GET', `/api/conversations?q=${'a'.repeat(501)}`), 400, 'INVALID_REQUEST');
    expectEnvelope(await svc.request('GET', '/api/conversations?q=a%00b'), 400, 'INVALID_REQUEST');
    // Lone surrogates arrive intact through JSON (tRPC): refused as input, or searched as U+FFFD.
    for (const q of ['\uD800', 'x\uDC00y', '\uDBFF\uDBFF']) {
      const res = await svc.request('GET', `/trpc/conversations.list?input=${encodeURIComponent(JSON.stringify({ json: { q } }))}`);
      expect([200, 400], res.text).toContain(res.status);
    }
  });

  it('documents before and nextBefore in the OpenAPI document', async () => {
    const doc = (await svc.request('GET', '/api/openapi.json')).body;
    const operation = doc.paths['/api/conversations'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['limit', 'offset', 'before', 'q']));
    expect(JSON.stringify(operation.responses)).toContain('nextBefore');
  });

  it('indexes rows stored before the search migration', async () => {
    const database = await createTestDatabase(kind);
    try {
      const all = readMigrations(kind);
      const searchIndex = all.findIndex((migration) => migration.name.endsWith('_conversation_search'));
      expect(searchIndex).toBeGreaterThan(0);
      await migrate(database.url, all.slice(0, searchIndex));
      // Straight through the driver: the service's own reads need the migrated schema.
      const rows = [
        `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES ('early', 'local', 'Old Ärger', 1, 1, '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')`,
        `INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt") VALUES ('early-1', 'early', 0, 'user', 'a stored ΣΊΣΥΦΟΣ', false, '2026-01-01T00:00:00.000+00:00')`,
      ];
      if (kind === 'sqlite') {
        const raw = new BetterSqlite3(sqliteFilePath(database.url));
        for (const sql of rows) raw.exec(sql);
        raw.close();
      } else {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        for (const sql of rows) await client.query(sql.replace(/\+00:00'/g, "'"));
        await client.end();
      }
      await migrate(database.url, all);
      await using after = await startTestService(kind, {}, database);
      for (const q of ['ärger', 'σίσυφος', 'old', 'ΣΊ']) {
        const res = await after.request('GET', `/api/conversations?q=${encodeURIComponent(q)}`);
        expect(res.body.conversations.map((c: { id: string }) => c.id), q).toEqual(['early']);
      }
    } finally {
      await database.drop();
    }
  });
});

describeOnDatabases('conversation search between users', (kind) => {
  let idp: TestIdentityProvider;
  let service: TestService;
  beforeAll(async () => {
    idp = await startIdentityProvider();
    service = await startAuthService(kind, idp, { RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  it("never finds another user's conversations, by any text, cursor or depth", async () => {
    const alice = await idp.sign({ sub: 'alice', realm_access: { roles: ['User'] } });
    const mallory = await idp.sign({ sub: 'mallory', realm_access: { roles: ['User'] } });
    const saved = await requestAs(service, alice, 'POST', '/api/conversation/save', {
      json: { title: 'Alice secret plan', conversationData: { messages: [{ role: 'user', content: 'the vault code is zebra-7' }] } },
    });
    expect(saved.status).toBe(200);
    const aliceId = saved.body.conversationId as string;
    await requestAs(service, mallory, 'POST', '/api/conversation/save', {
      json: { title: 'Mallory notes', conversationData: { messages: [{ role: 'user', content: 'nothing here' }] } },
    });
    expect((await requestAs(service, alice, 'GET', '/api/conversations?q=zebra')).body.total).toBe(1);
    for (const q of ['zebra', 'ZEBRA-7', 'secret', 'Alice', 'ze', 'z', '%', '_', 'e', 'a']) {
      const res = await requestAs(service, mallory, 'GET', `/api/conversations?q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body), q).not.toContain(aliceId);
    }
    // A cursor naming Alice's conversation only positions Mallory's own list.
    const aliceCursor = (await requestAs(service, alice, 'GET', '/api/conversations?limit=1')).body;
    const cursor = Buffer.from(JSON.stringify([aliceCursor.conversations[0].lastModified, aliceId])).toString('base64url');
    for (const q of ['', '&q=e', '&q=zebra']) {
      const res = await requestAs(service, mallory, 'GET', `/api/conversations?before=${cursor}${q}`);
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(aliceId);
    }
  });
});
