// The yardstick of bench/rest.ts: a bare Express server answering the same two requests as the
// service with the same queries, and nothing else (no validation, guards, limits, logging or
// tRPC). `tsx bench/bare-express.ts <DATABASE_URL>`; prints its URL as its first line.
import Database from 'better-sqlite3';
import express from 'express';
import pg from 'pg';

const url = process.argv[2] ?? '';
const owner = 'local';
const listed = (owner: string) => `"ownerId" = ${owner} AND ("messageCount" > 0 OR title <> '')`;

interface Row {
  id: string;
  title: string;
  createdAt: string | Date;
  lastModified: string | Date;
  messageCount: number;
}

type Reader = { ping(): Promise<void>; list(limit: number, offset: number): Promise<{ rows: Row[]; total: number }> };

function sqliteReader(path: string): Reader {
  const db = new Database(path);
  const ping = db.prepare('SELECT 1');
  const page = db.prepare<[string, number, number], Row>(
    `SELECT id, title, "createdAt", "lastModified", "messageCount" FROM "Conversation" WHERE ${listed('?')} ORDER BY "lastModified" DESC, id LIMIT ? OFFSET ?`,
  );
  const count = db.prepare<[string], { total: number }>(`SELECT COUNT(*) AS total FROM "Conversation" WHERE ${listed('?')}`);
  return {
    ping: () => {
      ping.get();
      return Promise.resolve();
    },
    list: (limit, offset) => Promise.resolve({ rows: page.all(owner, limit, offset), total: count.get(owner)?.total ?? 0 }),
  };
}

function postgresReader(connectionString: string): Reader {
  const pool = new pg.Pool({ connectionString });
  return {
    ping: async () => {
      await pool.query('SELECT 1');
    },
    list: async (limit, offset) => {
      const [rows, count] = await Promise.all([
        pool.query<Row>({
          name: 'page',
          // Plain columns: the driver makes Dates of them (the machine runs on UTC, as Prisma writes).
          text: `SELECT id, title, "createdAt", "lastModified", "messageCount"
                 FROM "Conversation" WHERE ${listed('$1')} ORDER BY "lastModified" DESC, id LIMIT $2 OFFSET $3`,
          values: [owner, limit, offset],
        }),
        pool.query<{ total: number }>({ name: 'count', text: `SELECT COUNT(*)::int AS total FROM "Conversation" WHERE ${listed('$1')}`, values: [owner] }),
      ]);
      return { rows: rows.rows, total: count.rows[0]?.total ?? 0 };
    },
  };
}

const reader = url.startsWith('file:') ? sqliteReader(url.slice('file:'.length)) : postgresReader(url);
const app = express();
// Requests arriving while a probe runs share it, as the service's status probe does
// (src/core/status/service-status.ts): the same queries on both sides.
let probing: Promise<void> | undefined;
app.get('/api/status', async (_req, res) => {
  probing ??= reader.ping().finally(() => (probing = undefined));
  await probing;
  res.json({ status: 'ok', timestamp: new Date().toISOString() });
});
app.get('/api/conversations', async (req, res) => {
  const limit = Number(req.query.limit ?? 50);
  const offset = Number(req.query.offset ?? 0);
  const { rows, total } = await reader.list(limit, offset);
  const conversations = rows.map((row) => ({
    id: row.id,
    title: row.title,
    createdAt: new Date(row.createdAt).toISOString(),
    lastModified: new Date(row.lastModified).toISOString(),
    messageCount: row.messageCount,
  }));
  res.json({ conversations, total });
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address !== null && typeof address === 'object') console.log(`http://127.0.0.1:${address.port}`);
});
