import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAssistantClient } from '../../src/client/assistant-client.js';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate, readMigrations } from '../../src/core/db/migrate.js';
import { startFakeOllama, startFakeOpenAI, type FakeOllama, type FakeProvider, type RecordedRequest } from '../fakes/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { openSse } from '../helpers/sse.js';
import { expectEnvelope, startTestService, type TestService } from '../helpers/test-service.js';
import { isDoneOf, open, wsUrl } from '../helpers/ws-client.js';

// CONTRACT §12's per-user model: each user's own active model decides what every chat path sends
// (REST, SSE, /trpc, /ws), at the same time as another user's different one; a user who never
// switched follows the service default, which only a Lead changes; and a database from before
// the change keeps its one stored active model as that default.

const OPENAI_KEY = 'sk-per-user-model-0123456789';
const PER_USER_MIGRATION = '20261126212256_per_user_model';

type Person = 'alice' | 'bob' | 'carol' | 'lead' | 'dev' | 'admin' | 'dude' | 'nobody';

const sentBy = (requests: RecordedRequest[], text: string) => requests.filter((request) => JSON.stringify(request.body).includes(text));

describeOnDatabases('per-user active model', (kind) => {
  let idp: TestIdentityProvider;
  let ollama: FakeOllama;
  let openai: FakeProvider;
  let svc: TestService;
  const tokens = new Map<Person, string>();
  const token = (person: Person) => tokens.get(person) ?? null;
  const as = (person: Person, method: string, path: string, json?: unknown) => requestAs(svc, token(person), method, path, json === undefined ? {} : { json });
  const currentOf = async (person: Person) => (await as(person, 'GET', '/api/model/current')).body as { model: string; provider: string };

  beforeAll(async () => {
    idp = await startIdentityProvider();
    ollama = await startFakeOllama({ models: ['llama3.2:latest', 'qwen3:8b'] });
    openai = await startFakeOpenAI({ apiKey: OPENAI_KEY, models: ['gpt-4o-mini', 'gpt-4o'] });
    svc = await startAuthService(kind, idp, {
      ENABLE_SCHEDULING: 'false',
      AI_MODEL_PROVIDER: 'ollama',
      AI_MODEL_NAME: 'llama3.2',
      OLLAMA_BASE_URL: ollama.url,
      OPENAI_BASE_URL: openai.url,
      OPENAI_API_KEY: OPENAI_KEY,
    });
    const people: [Person, string[]][] = [
      ['alice', ['User']],
      ['bob', ['Dev']],
      ['carol', ['User']],
      ['lead', ['Lead']],
      ['dev', ['Dev']],
      ['admin', ['Admin']],
      ['dude', ['TheDude']],
      ['nobody', []],
    ];
    for (const [person, roles] of people) {
      idp.define(person, { sub: `model-${person}`, roles });
      tokens.set(person, await idp.tokenFor(person));
    }
    // Slow enough that the two users' generations overlap.
    const slow = { kind: 'text' as const, chunks: ['one', ' two', ' three'], chunkDelayMs: 40 };
    ollama.setDefault(slow);
    openai.setDefault(slow);
  });
  afterAll(async () => {
    await svc[Symbol.asyncDispose]();
    await Promise.all([ollama.close(), openai.close(), idp[Symbol.asyncDispose]()]);
  });

  /** One message by `person` through each chat transport, all at once; resolves with each reply's model. */
  async function chatEverywhere(person: Person, tag: string): Promise<string[]> {
    const viaMessage = as(person, 'POST', '/api/message', { message: `${tag} via message`, mode: 'chat' }).then((reply) => {
      expect(reply.status, reply.text).toBe(200);
      return `${reply.body.provider}/${reply.body.model}`;
    });
    const viaStream = openSse(`${svc.url}/api/message/stream`, {
      headers: { authorization: `Bearer ${token(person)}` },
      json: { message: `${tag} via stream`, mode: 'chat' },
    }).then(async (stream) => {
      expect(stream.status, JSON.stringify(stream.json)).toBe(200);
      const done = (await stream.events()).find((event) => event.data.type === 'done');
      return `${done?.data.metadata.provider}/${done?.data.metadata.model}`;
    });
    const typed = createAssistantClient({ baseUrl: svc.url, token: token(person) ?? '' });
    const viaTrpc = typed.chat.send.mutate({ message: `${tag} via trpc`, mode: 'chat' }).then((reply) => `${reply.provider}/${reply.model}`);
    const viaSocket = open(wsUrl(svc.url, `/ws?access_token=${token(person)}`)).then(async (socket) => {
      socket.send({ type: 'message', id: 'ask', data: { message: `${tag} via ws`, mode: 'chat' } });
      const done = (await socket.until(isDoneOf('ask'))).at(-1)?.data.event;
      socket.close();
      return `${done.metadata.provider}/${done.metadata.model}`;
    });
    return Promise.all([viaMessage, viaStream, viaTrpc, viaSocket]);
  }

  it('two users with different active models chat at once, each with their own, on every chat path', async () => {
    expect((await as('alice', 'POST', '/api/model/switch', { modelName: 'openai/gpt-4o-mini' })).body).toEqual({
      success: true,
      activeModel: 'gpt-4o-mini',
      provider: 'openai',
    });
    expect((await as('bob', 'POST', '/api/model/switch', { modelName: 'qwen3:8b' })).body).toMatchObject({ activeModel: 'qwen3:8b', provider: 'ollama' });
    expect(await currentOf('alice')).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });
    expect(await currentOf('bob')).toMatchObject({ model: 'qwen3:8b', provider: 'ollama' });

    const [alice, bob] = await Promise.all([chatEverywhere('alice', 'alice-1'), chatEverywhere('bob', 'bob-1')]);
    expect(alice).toEqual(Array(4).fill('openai/gpt-4o-mini'));
    expect(bob).toEqual(Array(4).fill('ollama/qwen3:8b'));

    // What reached each provider: alice's four questions only at OpenAI as gpt-4o-mini, bob's only at Ollama as qwen3:8b.
    const atOpenai = sentBy(openai.chatRequests(), 'alice-1');
    expect(atOpenai).toHaveLength(4);
    expect(atOpenai.map((request) => request.body.model)).toEqual(Array(4).fill('gpt-4o-mini'));
    expect(sentBy(ollama.chatRequests(), 'alice-1')).toEqual([]);
    const atOllama = sentBy(ollama.chatRequests(), 'bob-1');
    expect(atOllama.map((request) => request.body.model)).toEqual(Array(4).fill('qwen3:8b'));
    expect(sentBy(openai.chatRequests(), 'bob-1')).toEqual([]);
    // The overlap is real: some of bob's requests arrived before alice's last one finished.
    const aliceLastEnd = Math.max(...atOpenai.map((request) => request.finishedAt ?? 0));
    expect(atOllama.some((request) => request.receivedAt < aliceLastEnd)).toBe(true);

    // The context object names the caller's own model.
    const context = (await as('alice', 'GET', '/api/context')).body.context;
    expect(context.model).toEqual({ name: 'gpt-4o-mini', provider: 'openai' });
  });

  it('a user who never switched follows the service default, which a Lead changes for them and nobody else', async () => {
    expect(await currentOf('carol')).toMatchObject({ model: 'llama3.2', provider: 'ollama' });
    const before = await as('carol', 'POST', '/api/message', { message: 'carol-1', mode: 'chat' });
    expect(`${before.body.provider}/${before.body.model}`).toBe('ollama/llama3.2');

    const changed = await as('lead', 'POST', '/api/model/default', { modelName: 'gpt-4o', provider: 'openai' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toEqual({ success: true, defaultModel: 'gpt-4o', provider: 'openai' });

    expect(await currentOf('carol')).toMatchObject({ model: 'gpt-4o', provider: 'openai' });
    expect(await chatEverywhere('carol', 'carol-2')).toEqual(Array(4).fill('openai/gpt-4o'));
    expect(sentBy(openai.chatRequests(), 'carol-2').map((request) => request.body.model)).toEqual(Array(4).fill('gpt-4o'));
    // The Lead's own model is the default too (the Lead never switched); the switched users keep theirs.
    expect(await currentOf('lead')).toMatchObject({ model: 'gpt-4o', provider: 'openai' });
    expect(await currentOf('alice')).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });
    expect(await currentOf('bob')).toMatchObject({ model: 'qwen3:8b', provider: 'ollama' });

    const audit = (await as('lead', 'GET', '/api/audit/log?type=model&limit=1000')).body.entries as { userId: string; details: Record<string, unknown> }[];
    expect(audit.find((entry) => entry.details.action === 'default')).toMatchObject({
      userId: 'model-lead',
      details: { action: 'default', modelName: 'gpt-4o', provider: 'openai', previous: { modelName: 'llama3.2', provider: 'ollama' } },
    });
    expect(JSON.stringify(audit)).not.toContain(OPENAI_KEY);
  });

  it('only a Lead (or TheDude) changes the default; anyone who may chat switches their own model', async () => {
    for (const person of ['alice', 'dev', 'admin', 'nobody'] as const) {
      const refused = expectEnvelope(await as(person, 'POST', '/api/model/default', { modelName: 'qwen3:8b', provider: 'ollama' }), 403, 'FORBIDDEN');
      expect(refused.details).toEqual({ missing: 'role Lead' });
    }
    expect(await currentOf('carol')).toMatchObject({ model: 'gpt-4o', provider: 'openai' });
    // A bad body from a Lead is 400, never stored.
    expectEnvelope(await as('dude', 'POST', '/api/model/default', { modelName: 'openai/gpt-4o', provider: 'anthropic' }), 400, 'INVALID_REQUEST');
    expectEnvelope(await as('lead', 'POST', '/api/model/default', { modelName: 'evil.example/library/x', provider: 'ollama' }), 400, 'INVALID_REQUEST');
    expect((await as('dude', 'POST', '/api/model/default', { modelName: 'llama3.2' })).body).toEqual({ success: true, defaultModel: 'llama3.2', provider: 'ollama' });
    expect(await currentOf('carol')).toMatchObject({ model: 'llama3.2', provider: 'ollama' });

    // A User (no models:download) may switch their own; a token without chat:send may not.
    expect((await as('carol', 'POST', '/api/model/switch', { modelName: 'gpt-4o-mini' })).status).toBe(200);
    expect(await currentOf('carol')).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });
    expect(await currentOf('lead')).toMatchObject({ model: 'llama3.2', provider: 'ollama' });
    const refused = expectEnvelope(await as('nobody', 'POST', '/api/model/switch', { modelName: 'gpt-4o-mini' }), 403, 'FORBIDDEN');
    expect(refused.details).toEqual({ missing: 'chat:send' });
  });
});

async function run(database: TestDatabase, sql: string, params: unknown[] = []): Promise<void> {
  if (database.kind === 'sqlite') {
    const raw = new BetterSqlite3(sqliteFilePath(database.url));
    try {
      raw.prepare(sql).run(...params);
    } finally {
      raw.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

describeOnDatabases('per-user model migration', (kind) => {
  it('the active model of a database made before per-user models becomes the service default', async () => {
    const database = await createTestDatabase(kind);
    try {
      // The database as the previous release left it: migrated up to before this change, with
      // the one shared active model stored as it stored it.
      const older = readMigrations(kind).filter((migration) => migration.name < PER_USER_MIGRATION);
      expect(older.length).toBeLessThan(readMigrations(kind).length);
      await migrate(database.url, older);
      const placeholder = kind === 'sqlite' ? '?' : '$1';
      await run(
        database,
        `INSERT INTO "Setting" ("key", "value", "updatedAt") VALUES ('activeModel', ${placeholder}, '2026-11-20T10:00:00.000+00:00')`,
        [JSON.stringify({ name: 'gpt-4o-mini', provider: 'openai' })],
      );

      // AI_MODEL_* name another model: they only seed a database that never stored one.
      await using svc = await startTestService(kind, { AI_MODEL_PROVIDER: 'anthropic', AI_MODEL_NAME: 'claude-sonnet-4-5', ENABLE_SCHEDULING: 'false' }, database);
      expect((await svc.request('GET', '/api/model/current')).body).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai' });
      const context = (await svc.request('GET', '/api/context')).body.context;
      expect(context.model).toEqual({ name: 'gpt-4o-mini', provider: 'openai' });
    } finally {
      await database.drop();
    }
  });
});
