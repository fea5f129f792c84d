import type pg from 'pg';
import type { Prisma } from '../../generated/sqlite/client.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';
import { isPostgresUnavailable } from '../db/database-unavailable.js';
import { AppError } from '../errors/app-error.js';
import { containsPattern, type ConversationReads, type ListedPage, type ListQuery, type StoredConversation } from './conversation-reads.js';

// The conversation reads on PostgreSQL: one named statement a call on Prisma's own pool. A list is
// one round trip (page and total). Timestamps are `timestamp(3)` holding UTC, as Prisma writes them:
// they are read as ISO text, never through the driver's local-time Date conversion.

const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const summaryColumns = `id, title, ${iso('"createdAt"')} AS "createdAt", ${iso('"lastModified"')} AS "lastModified", "messageCount"`;
const listed = `"ownerId" = $1::text AND ("messageCount" > 0 OR title <> '')`;
const matching = `(title ILIKE $4::text ESCAPE '\\'
  OR EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m.content ILIKE $4::text ESCAPE '\\'))`;

/**
 * The page (as a JSON array, newest first) and the total of the conversations `where` selects.
 * The page is taken from plain columns and formatted afterwards: with the formatting inside,
 * the planner sorted every row instead of walking the (ownerId, lastModified) index.
 */
function listSql(where: string): string {
  const row = `json_build_object('id', p.id, 'title', p.title, 'createdAt', ${iso('p."createdAt"')}, 'lastModified', ${iso('p."lastModified"')}, 'messageCount', p."messageCount")`;
  return `SELECT
  (SELECT COUNT(*) FROM "Conversation" c WHERE ${where})::int AS total,
  COALESCE((SELECT json_agg(${row} ORDER BY p."lastModified" DESC, p.id) FROM (
    SELECT id, title, "createdAt", "lastModified", "messageCount"
    FROM "Conversation" c WHERE ${where} ORDER BY "lastModified" DESC, id LIMIT $2::bigint OFFSET $3::bigint) p), '[]'::json) AS rows`;
}

const listAllSql = listSql(listed);
const searchSql = listSql(`${listed} AND ${matching}`);
const findSql = `SELECT ${summaryColumns}, "ownerId", metadata FROM "Conversation" WHERE id = $1::text`;
const messagesSql = `SELECT id, role, content, ${iso('"createdAt"')} AS "createdAt", "toolCalls", model, provider, "finishReason", usage
  FROM "Message" WHERE "conversationId" = $1::text ORDER BY seq`;

interface SummaryRow {
  id: string;
  title: string;
  createdAt: string;
  lastModified: string;
  messageCount: number;
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
  constructor(private readonly pool: pg.Pool) {}

  async list(query: ListQuery): Promise<ListedPage> {
    const text = query.text?.trim();
    const values: unknown[] = [query.ownerId, query.limit, query.offset];
    const [row] = text
      ? await this.rows<{ total: number; rows: SummaryRow[] }>('conversations.search', searchSql, [...values, containsPattern(text)])
      : await this.rows<{ total: number; rows: SummaryRow[] }>('conversations.list', listAllSql, values);
    return { rows: (row?.rows ?? []).map(summaryOf), total: row?.total ?? 0 };
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
