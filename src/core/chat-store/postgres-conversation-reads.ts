import type pg from 'pg';
import type { Prisma } from '../../generated/sqlite/client.js';
import type { ListPosition } from '../conversations/conversation-list-cursor.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';
import { isPostgresUnavailable } from '../db/database-unavailable.js';
import { AppError } from '../errors/app-error.js';
import { searchText, type ConversationReads, type ListedPage, type ListQuery, type StoredConversation } from './conversation-reads.js';
import { postgresIndexable, postgresPattern } from './conversation-search-patterns.js';

// The conversation reads on PostgreSQL: one named statement a call on Prisma's own pool. A list is
// one round trip (page and total). Timestamps are `timestamp(3)` holding UTC, as Prisma writes them:
// they are read as ISO text, never through the driver's local-time Date conversion.
//
// The list walks the partial index "Conversation_listed_idx" (prisma/postgresql/migrations/
// *_conversation_search), whose WHERE clause `listed` implies. A search is a case-sensitive
// regular expression matching every case of each character as FTS5 folds it
// (conversation-search-patterns.ts), so both databases find the same conversations: texts with
// three word characters in a row are looked up in the pg_trgm GIN indexes, the others scanned
// over the caller's own conversations (a GIN scan without trigrams would read every user's rows).

const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const summaryColumns = `id, title, ${iso('"createdAt"')} AS "createdAt", ${iso('"lastModified"')} AS "lastModified", "messageCount"`;
const listed = `c."ownerId" = $1::text AND (c."messageCount" > 0 OR c.title <> '')`;
/** After the cursor ($4, $5) in the list's order (lastModified newest first, then id). */
const afterCursor = `c."lastModified" <= $4::timestamp AND (c."lastModified" < $4::timestamp OR c.id > $5::text)`;
const lookedUp = `c.id IN (SELECT m."conversationId" FROM "Message" m WHERE m.content ~ $6::text
  UNION SELECT t.id FROM "Conversation" t WHERE t.title ~ $6::text)`;
// textregexeq is the function behind `~`: called by name, it keeps the planner off the GIN indexes.
const scanned = `(textregexeq(c.title, $6::text)
  OR EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND textregexeq(m.content, $6::text)))`;

/**
 * The page (as a JSON array, newest first) and the total of the conversations `where` selects.
 * The page is taken from plain columns and formatted afterwards: with the formatting inside,
 * the planner sorted every row instead of walking the index.
 */
function listSql(where: string, page: string): string {
  const row = `json_build_object('id', p.id, 'title', p.title, 'createdAt', ${iso('p."createdAt"')}, 'lastModified', ${iso('p."lastModified"')}, 'messageCount', p."messageCount")`;
  return `SELECT
  (SELECT COUNT(*) FROM "Conversation" c WHERE ${where})::int AS total,
  COALESCE((SELECT json_agg(${row} ORDER BY p."lastModified" DESC, p.id) FROM (
    SELECT id, title, "createdAt", "lastModified", "messageCount"
    FROM "Conversation" c WHERE ${page} ORDER BY "lastModified" DESC, id LIMIT $2::bigint OFFSET $3::bigint) p), '[]'::json) AS rows`;
}

/** As listSql, with the matching conversations gathered once for both the total and the page. */
function searchSql(matching: string): string {
  const row = `json_build_object('id', p.id, 'title', p.title, 'createdAt', ${iso('p."createdAt"')}, 'lastModified', ${iso('p."lastModified"')}, 'messageCount', p."messageCount")`;
  return `WITH hits AS MATERIALIZED (
  SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount" FROM "Conversation" c WHERE ${listed} AND ${matching})
SELECT
  (SELECT COUNT(*) FROM hits)::int AS total,
  COALESCE((SELECT json_agg(${row} ORDER BY p."lastModified" DESC, p.id) FROM (
    SELECT * FROM hits c WHERE $4::timestamp IS NULL OR (${afterCursor})
    ORDER BY "lastModified" DESC, id LIMIT $2::bigint OFFSET $3::bigint) p), '[]'::json) AS rows`;
}

const statements = {
  list: listSql(listed, listed),
  listAfter: listSql(listed, `${listed} AND ${afterCursor}`),
  lookUp: searchSql(lookedUp),
  scan: searchSql(scanned),
};
const findSql = `SELECT ${summaryColumns}, "ownerId", metadata FROM "Conversation" WHERE id = $1::text`;
const messagesSql = `SELECT id, role, content, ${iso('"createdAt"')} AS "createdAt", "toolCalls", model, provider, "finishReason", usage, "supersededBy"
  FROM "Message" WHERE "conversationId" = $1::text ORDER BY seq`;

interface SummaryRow {
  id: string;
  title: string;
  createdAt: string;
  lastModified: string;
  messageCount: number;
}

/** The cursor's time as the ISO text of a UTC `timestamp(3)`. */
function cursorOf(position: ListPosition): [string, string] {
  return [position.lastModified.toISOString().replace('Z', ''), position.id];
}

function summaryOf(row: SummaryRow): ConversationSummaryRow {
  return {
    id: row.id,
    title: row.title,
    createdAt: new Date(row.createdAt),
    lastModified: new Date(row.lastModified),
    messageCount: row.messageCount,
  };
}

export class PostgresConversationReads implements ConversationReads {
  private wordsProbe: Promise<boolean> | null = null;

  constructor(private readonly pool: pg.Pool) {}

  async list(query: ListQuery): Promise<ListedPage> {
    const text = searchText(query.text);
    // One row more than the page tells whether another page follows.
    const values: unknown[] = [query.ownerId, query.limit + 1, query.offset];
    const cursor = query.before ? cursorOf(query.before) : [null, null];
    let name: keyof typeof statements;
    if (text === null) {
      name = query.before ? 'listAfter' : 'list';
      if (query.before) values.push(...cursor);
    } else {
      name = postgresIndexable(text, await this.unicodeWords()) ? 'lookUp' : 'scan';
      values.push(...cursor, postgresPattern(text));
    }
    const [row] = await this.rows<{ total: number; rows: SummaryRow[] }>(`conversations.${name}`, statements[name], values);
    const rows = row?.rows ?? [];
    return { rows: rows.slice(0, query.limit).map(summaryOf), total: row?.total ?? 0, more: rows.length > query.limit };
  }

  /**
   * Whether pg_trgm takes non-ASCII letters for word characters, which depends on the database's
   * LC_CTYPE (not under `C`): if not, a text needs three ASCII letters or digits to be looked up.
   */
  private unicodeWords(): Promise<boolean> {
    this.wordsProbe ??= this.rows<{ unicode: boolean }>('conversations.trigramWords', `SELECT show_trgm('ééé') <> '{}'::text[] AS unicode`, [])
      .then(([row]) => row?.unicode ?? false)
      .catch((error: unknown) => {
        this.wordsProbe = null;
        throw error;
      });
    return this.wordsProbe;
  }

  async find(id: string): Promise<StoredConversation | null> {
    const [row] = await this.rows<SummaryRow & { ownerId: string; metadata: Prisma.JsonValue | null }>('conversations.find', findSql, [id]);
    return row ? { ...summaryOf(row), ownerId: row.ownerId, metadata: row.metadata } : null;
  }

  async messages(conversationId: string): Promise<MessageViewRow[]> {
    const rows = await this.rows<Omit<MessageViewRow, 'createdAt'> & { createdAt: string }>('conversations.messages', messagesSql, [conversationId]);
    return rows.map((row) => ({ ...row, createdAt: new Date(row.createdAt) }));
  }

  async ping(): Promise<void> {
    await this.rows('conversations.ping', 'SELECT 1', []);
  }

  /** The pool belongs to the database (create-db.ts), which ends it. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** A server that cannot be used is SERVICE_UNAVAILABLE (503), as on the chat store. */
  private async rows<Row extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<Row[]> {
    try {
      return (await this.pool.query<Row>({ name, text, values })).rows;
    } catch (error) {
      if (isPostgresUnavailable(error)) throw new AppError('SERVICE_UNAVAILABLE', 'Database unavailable', { cause: error });
      throw error;
    }
  }
}
