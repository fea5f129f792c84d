// Fills a migrated database with the storage benchmark's data, straight through the driver: the
// `local` user's conversations with `perConversation` messages each, and one long conversation.
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { indexAllPending } from '../src/core/chat-store/sqlite-search-indexer.js';

export interface SeedPlan {
  conversations: number;
  perConversation: number;
  /** Messages of the one long conversation (the load benchmark's). */
  longConversation: number;
}

export interface Seeded {
  longId: string;
  messages: number;
}

const text = (index: number) => `Message ${index}: ${'lorem ipsum dolor sit amet '.repeat(6)}`;

export async function seedConversations(url: string, plan: SeedPlan): Promise<Seeded> {
  return url.startsWith('file:') ? seedSqlite(url.slice('file:'.length), plan) : seedPostgres(url, plan);
}

function seedSqlite(path: string, plan: SeedPlan): Seeded {
  const db = new Database(path, { timeout: 10_000 });
  const base = Date.UTC(2026, 0, 1);
  // As Prisma's adapter writes DateTime.
  const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
  const conversation = db.prepare(
    `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES (?, 'local', ?, ?, ?, ?, ?)`,
  );
  const message = db.prepare(
    `INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt") VALUES (?, ?, ?, ?, ?, 0, ?)`,
  );
  const longId = randomUUID();
  let messages = 0;
  db.transaction(() => {
    for (let index = 0; index < plan.conversations; index++) {
      const id = index === 0 ? longId : randomUUID();
      const count = index === 0 ? plan.longConversation : plan.perConversation;
      conversation.run(id, `Conversation ${index}`, count, count, at(base + index * 1000), at(base + index * 60_000));
      for (let seq = 0; seq < count; seq++) message.run(randomUUID(), id, seq, seq % 2 === 0 ? 'user' : 'assistant', text(seq), at(base + index * 1000 + seq));
      messages += count;
    }
  })();
  // Indexed now, as the service's indexer would have by the time it is searched.
  indexAllPending(db);
  db.close();
  return { longId, messages };
}

async function seedPostgres(connectionString: string, plan: SeedPlan): Promise<Seeded> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const longId = randomUUID();
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified")
       SELECT CASE WHEN i = 0 THEN $1::text ELSE gen_random_uuid()::text END, 'local', 'Conversation ' || i,
              CASE WHEN i = 0 THEN $3::int ELSE $2::int END, CASE WHEN i = 0 THEN $3::int ELSE $2::int END,
              timestamp '2026-01-01' + i * interval '1 second', timestamp '2026-01-01' + i * interval '1 minute'
       FROM generate_series(0, $4::int - 1) AS i`,
      [longId, plan.perConversation, plan.longConversation, plan.conversations],
    );
    await client.query(
      `INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt")
       SELECT gen_random_uuid()::text, c.id, s, CASE WHEN s % 2 = 0 THEN 'user' ELSE 'assistant' END,
              'Message ' || s || ': ' || repeat('lorem ipsum dolor sit amet ', 6), false, c."createdAt" + s * interval '1 millisecond'
       FROM "Conversation" c CROSS JOIN LATERAL generate_series(0, c."messageCount" - 1) AS s WHERE c."ownerId" = 'local'`,
    );
    await client.query('COMMIT');
    await client.query('ANALYZE "Conversation"');
    await client.query('ANALYZE "Message"');
    return { longId, messages: plan.longConversation + (plan.conversations - 1) * plan.perConversation };
  } finally {
    await client.end();
  }
}
