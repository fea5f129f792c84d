// `tsx bench/conversation-search.ts`: conversation search and deep paging (issue 20) on the built
// service (`dist/`), on SQLite and then on PostgreSQL, each holding 10,000 conversations of the
// `local` user with 20 messages each (200,000 messages of varied text), seeded through the driver
// after the service has migrated the database. One client at a time, ROUNDS requests a row:
//   q hit        a word in 10 conversations; `q hit, non-ASCII` the same in another case (ÄRGER/ärger)
//   q miss       a word in none; `q 2-char` two characters in none (a scan, trigrams cannot help)
//   q common     a word in every conversation (everything matches: the total is the cost)
//   offset       the last page (offset 9,950) and offset 10,000,000
//   before       the page at the same depth as the last one, by the cursor
//   status       /api/status polled every 10 ms on a second connection while one client runs
//                STATUS_SEARCHES `q common` searches back to back: how long the loop is held
//   one statement (SQLite) the `q common` lookup as a single statement, as it ran before it was
//                stepped, timed in this process on the seeded file: the loop it would hold
// Every reply must be a 200; a row whose total is not the expected one is marked in the table.
// It runs against the build in the current folder, so two builds are measured by running it from
// each one's folder. BENCH_POSTGRES_URL (default postgresql://postgres@127.0.0.1:5432/postgres)
// names a server where it creates and drops its own database; BENCH_SKIP_POSTGRES=1 skips it.
// Bounded in time; traffic stays on 127.0.0.1. Results go to BENCHMARKS.md.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startBuiltService } from './built-service.js';
import { percentile } from './http-load.js';
import { indexAllPending } from '../src/core/chat-store/sqlite-search-indexer.js';

const CONVERSATIONS = 10_000;
const PER_CONVERSATION = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 100);
const LIMIT = 50;
const STATUS_SEARCHES = Number(process.env.BENCH_STATUS_SEARCHES ?? 20);
const STATUS_ROW = '`/api/status` while `q common` runs (p50 / p99 / max)';
const ONE_STATEMENT_ROW = '`q common` as one statement (before the steps), in-process';

interface Seed {
  conversations: { id: string; title: string; at: number; messages: string[] }[];
}

/** A deterministic generator, so both databases hold the same text. */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

function seedText(): Seed {
  const random = generator(20);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vel', 'dor', 'pen', 'sil', 'gar', 'nu', 'bre', 'fo', 'hal', 'ju', 'ost', 'wer', 'ci'];
  const word = () => Array.from({ length: 2 + Math.floor(random() * 3) }, () => syllables[Math.floor(random() * syllables.length)]).join('');
  const vocabulary = Array.from({ length: 3000 }, word);
  const sentence = (words: number) => Array.from({ length: words }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ');
  const base = Date.UTC(2026, 0, 1);
  const conversations = Array.from({ length: CONVERSATIONS }, (_, index) => {
    const messages = Array.from({ length: PER_CONVERSATION }, () => `${sentence(25 + Math.floor(random() * 15))} common`);
    // The hit: one message in every thousandth conversation.
    if (index % 1000 === 7) messages[5] = `${messages[5] ?? ''} saffron ÄRGER`;
    return { id: randomUUID(), title: `Conversation ${sentence(3)}`, at: base + index * 60_000, messages };
  });
  return { conversations };
}

function seedSqlite(path: string, seed: Seed): void {
  const db = new Database(path, { timeout: 10_000 });
  const at = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
  const conversation = db.prepare(
    `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES (?, 'local', ?, ?, ?, ?, ?)`,
  );
  const message = db.prepare(`INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt") VALUES (?, ?, ?, ?, ?, 0, ?)`);
  db.transaction(() => {
    for (const c of seed.conversations) {
      conversation.run(c.id, c.title, c.messages.length, c.messages.length, at(c.at), at(c.at));
      c.messages.forEach((content, seq) => message.run(randomUUID(), c.id, seq, seq % 2 === 0 ? 'user' : 'assistant', content, at(c.at + seq)));
    }
  })();
  // Indexed now, as the service's indexer would have by the time it is searched.
  indexAllPending(db);
  db.close();
}

async function seedPostgres(url: string, seed: Seed): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (let from = 0; from < seed.conversations.length; from += 500) {
      const batch = seed.conversations.slice(from, from + 500);
      await client.query(
        `INSERT INTO "Conversation" (id, "ownerId", title, "messageCount", "nextSeq", "createdAt", "lastModified")
         SELECT id, 'local', title, $3::int, $3::int, to_timestamp(at / 1000.0) AT TIME ZONE 'UTC', to_timestamp(at / 1000.0) AT TIME ZONE 'UTC'
         FROM unnest($1::text[], $2::text[], $4::float8[]) AS t(id, title, at)`,
        [batch.map((c) => c.id), batch.map((c) => c.title), PER_CONVERSATION, batch.map((c) => c.at)],
      );
      const rows = batch.flatMap((c) => c.messages.map((content, seq) => ({ c, content, seq })));
      await client.query(
        `INSERT INTO "Message" (id, "conversationId", seq, role, content, streaming, "createdAt")
         SELECT gen_random_uuid()::text, cid, seq, CASE WHEN seq % 2 = 0 THEN 'user' ELSE 'assistant' END, content, false,
                to_timestamp(at / 1000.0) AT TIME ZONE 'UTC'
         FROM unnest($1::text[], $2::int[], $3::text[], $4::float8[]) AS t(cid, seq, content, at)`,
        [rows.map((r) => r.c.id), rows.map((r) => r.seq), rows.map((r) => r.content), rows.map((r) => r.c.at + r.seq)],
      );
    }
    await client.query('COMMIT');
    await client.query('VACUUM ANALYZE "Conversation"');
    await client.query('VACUUM ANALYZE "Message"');
  } finally {
    await client.end();
  }
}

function getJson(agent: Agent, url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

interface Row {
  name: string;
  path: string;
  /** The total every reply must carry, when known. */
  total?: number;
}

const rows = (cursor: string | undefined): Row[] => [
  { name: 'q hit (`saffron`, 10 conversations)', path: '/api/conversations?q=saffron', total: 10 },
  { name: 'q hit, non-ASCII (`ärger` finds ÄRGER)', path: `/api/conversations?q=${encodeURIComponent('ärger')}`, total: 10 },
  { name: 'q miss (`qzxv`)', path: '/api/conversations?q=qzxv', total: 0 },
  { name: 'q 2-char (`qz`, a scan)', path: '/api/conversations?q=qz', total: 0 },
  { name: 'q common (`common`, all 10,000 match)', path: '/api/conversations?q=common', total: CONVERSATIONS },
  { name: 'list, first page', path: '/api/conversations', total: CONVERSATIONS },
  { name: 'offset 9,950 (the last page)', path: '/api/conversations?offset=9950', total: CONVERSATIONS },
  { name: 'offset 10,000,000', path: '/api/conversations?offset=10000000', total: CONVERSATIONS },
  ...(cursor === undefined ? [] : [{ name: 'before, the last page by cursor', path: `/api/conversations?before=${cursor}`, total: CONVERSATIONS }]),
];

/** /api/status round trips (ms, sorted) polled every 10 ms while `q common` is searched STATUS_SEARCHES times. */
async function statusDuringSearches(base: string): Promise<number[]> {
  const searcher = new Agent({ keepAlive: true, maxSockets: 1 });
  const poller = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let searching = true;
  const poll = async () => {
    while (searching) {
      const begun = performance.now();
      const reply = await getJson(poller, `${base}/api/status`);
      latencies.push(performance.now() - begun);
      if (reply.status !== 200) throw new Error(`/api/status answered ${reply.status}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const polling = poll();
  try {
    for (let round = 0; round < STATUS_SEARCHES; round++) await getJson(searcher, `${base}/api/conversations?q=common`);
  } finally {
    searching = false;
    await polling;
    searcher.destroy();
    poller.destroy();
  }
  return latencies.sort((a, b) => a - b);
}

/** The lookup as it was before it ran in steps (one statement, written out here), timed on the file. */
function oneStatement(path: string): number[] {
  const db = new Database(path, { readonly: true });
  try {
    const statement = db.prepare(`WITH hits AS MATERIALIZED (
      SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount" FROM "Conversation" c
      WHERE c."ownerId" = 'local' AND ("messageCount" > 0 OR "title" <> '') AND c.id IN (
        SELECT e."conversationId" FROM "ConversationSearch" s JOIN "ConversationSearchEntry" e ON e.id = s.rowid WHERE "ConversationSearch" MATCH '"common"'))
    SELECT t.total, p.* FROM (SELECT COUNT(*) AS total FROM hits) t
    LEFT JOIN (SELECT * FROM hits c ORDER BY c."lastModified" DESC, c.id ASC LIMIT 51) p ON 1 ORDER BY p."lastModified" DESC, p.id ASC`);
    const durations: number[] = [];
    for (let round = 0; round < STATUS_SEARCHES; round++) {
      const begun = performance.now();
      statement.all();
      durations.push(performance.now() - begun);
    }
    return durations.sort((a, b) => a - b);
  } finally {
    db.close();
  }
}

const spread = (sorted: number[]) => `${percentile(sorted, 0.5).toFixed(2)} / ${percentile(sorted, 0.99).toFixed(2)} / ${(sorted.at(-1) ?? Number.NaN).toFixed(2)}`;

async function measure(databaseUrl: string, seed: (url: string) => Promise<void>, sqlitePath?: string): Promise<Map<string, string>> {
  const service = await startBuiltService({ DATABASE_URL: databaseUrl });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const results = new Map<string, string>();
  try {
    const started = performance.now();
    await seed(databaseUrl);
    console.error(`seeded ${CONVERSATIONS * PER_CONVERSATION} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // The cursor of the page before the last: a build without `before` has none (and ignores it).
    const beforeLast = await getJson(agent, `${service.url}/api/conversations?offset=${CONVERSATIONS - 2 * LIMIT}`);
    const cursor = typeof beforeLast.body.nextBefore === 'string' ? beforeLast.body.nextBefore : undefined;
    for (const row of rows(cursor)) {
      const url = `${service.url}${row.path}`;
      for (let warm = 0; warm < 3; warm++) await getJson(agent, url);
      const latencies: number[] = [];
      // An older build's answer is measured all the same, and marked when its total is wrong.
      let wrong = '';
      for (let round = 0; round < ROUNDS; round++) {
        const begun = performance.now();
        const reply = await getJson(agent, url);
        latencies.push(performance.now() - begun);
        if (reply.status !== 200) throw new Error(`${row.path} answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 200)}`);
        if (row.total !== undefined && reply.body.total !== row.total) wrong = `, wrong total ${String(reply.body.total)}`;
      }
      latencies.sort((a, b) => a - b);
      results.set(row.name, `${percentile(latencies, 0.5).toFixed(2)} / ${percentile(latencies, 0.99).toFixed(2)}${wrong}`);
      console.error(`${row.name}: ${results.get(row.name) ?? ''}`);
    }
    results.set(STATUS_ROW, spread(await statusDuringSearches(service.url)));
    console.error(`${STATUS_ROW}: ${results.get(STATUS_ROW) ?? ''}`);
    if (sqlitePath !== undefined) {
      results.set(ONE_STATEMENT_ROW, spread(oneStatement(sqlitePath)));
      console.error(`${ONE_STATEMENT_ROW}: ${results.get(ONE_STATEMENT_ROW) ?? ''}`);
    }
  } finally {
    agent.destroy();
    await service.stop();
  }
  return results;
}

async function main(): Promise<void> {
  const seed = seedText();
  const folder = mkdtempSync(join(tmpdir(), 'assistant-search-bench-'));
  const columns: [string, Map<string, string>][] = [];
  try {
    const path = join(folder, 'search.db');
    columns.push(['SQLite p50 / p99 ms', await measure(`file:${path}`, () => {
      seedSqlite(path, seed);
      return Promise.resolve();
    }, path)]);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
  if (process.env.BENCH_SKIP_POSTGRES !== '1') {
    const admin = process.env.BENCH_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
    const name = `assistant_search_bench_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
    try {
      const url = new URL(admin);
      url.pathname = `/${name}`;
      columns.push(['PostgreSQL p50 / p99 ms', await measure(url.toString(), (target) => seedPostgres(target, seed))]);
    } finally {
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    }
  }
  const names = [...rows('x').map((row) => row.name), STATUS_ROW, ONE_STATEMENT_ROW];
  console.log(`| ${CONVERSATIONS * PER_CONVERSATION} messages, one client, ${ROUNDS} requests a row | ${columns.map(([title]) => title).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  for (const name of names) console.log(`| ${name} | ${columns.map(([, results]) => results.get(name) ?? 'n/a').join(' | ')} |`);
}

await main();
