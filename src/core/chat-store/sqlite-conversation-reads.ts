import Database from 'better-sqlite3';
import type { Prisma } from '../../generated/sqlite/client.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';
import { containsPattern, type ConversationReads, type ListedPage, type ListQuery, type StoredConversation } from './conversation-reads.js';
import { retryWhileBusy } from './sqlite-busy.js';

// The conversation reads on SQLite, on a connection of their own (WAL lets it read beside the
// writers). Values come back as Prisma stores them: DateTime as ISO text, JSON as text.

const summaryColumns = `id, title, "createdAt", "lastModified", "messageCount"`;
const listed = `"ownerId" = @ownerId AND ("messageCount" > 0 OR title <> '')`;
const matching = `(title LIKE @pattern ESCAPE '\\'
  OR EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m.content LIKE @pattern ESCAPE '\\'))`;
const newestFirst = `ORDER BY "lastModified" DESC, id ASC LIMIT @limit OFFSET @offset`;

interface SummaryRow {
  id: string;
  title: string;
  createdAt: string | number;
  lastModified: string | number;
  messageCount: number;
}

interface ConversationRow extends SummaryRow {
  ownerId: string;
  metadata: string | null;
}

interface MessageRow {
  id: string;
  role: string;
  content: string;
  createdAt: string | number;
  toolCalls: string | null;
  model: string | null;
  provider: string | null;
  finishReason: string | null;
  usage: string | null;
}

interface ListParameters {
  ownerId: string;
  limit: number;
  offset: number;
}

type SearchParameters = ListParameters & { pattern: string };

function prepareStatements(db: Database.Database) {
  return {
    page: db.prepare<[ListParameters], SummaryRow>(`SELECT ${summaryColumns} FROM "Conversation" c WHERE ${listed} ${newestFirst}`),
    count: db.prepare<[Pick<ListParameters, 'ownerId'>], { total: number }>(`SELECT COUNT(*) AS total FROM "Conversation" c WHERE ${listed}`),
    searchPage: db.prepare<[SearchParameters], SummaryRow>(
      `SELECT ${summaryColumns} FROM "Conversation" c WHERE ${listed} AND ${matching} ${newestFirst}`,
    ),
    searchCount: db.prepare<[Omit<SearchParameters, 'limit' | 'offset'>], { total: number }>(
      `SELECT COUNT(*) AS total FROM "Conversation" c WHERE ${listed} AND ${matching}`,
    ),
    find: db.prepare<[string], ConversationRow>(`SELECT ${summaryColumns}, "ownerId", metadata FROM "Conversation" WHERE id = ?`),
    ping: db.prepare<[], { one: number }>('SELECT 1 AS one'),
    messages: db.prepare<[string], MessageRow>(
      `SELECT id, role, content, "createdAt", "toolCalls", model, provider, "finishReason", usage
       FROM "Message" WHERE "conversationId" = ? ORDER BY seq`,
    ),
  };
}

/** Prisma's better-sqlite3 adapter writes ISO text; an integer would be Unix milliseconds. */
function dateOf(value: string | number): Date {
  return new Date(value);
}

function jsonOf(text: string | null): Prisma.JsonValue | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as Prisma.JsonValue;
  } catch {
    return null;
  }
}

function summaryOf(row: SummaryRow): ConversationSummaryRow {
  return { id: row.id, title: row.title, createdAt: dateOf(row.createdAt), lastModified: dateOf(row.lastModified), messageCount: row.messageCount };
}

export class SqliteConversationReads implements ConversationReads {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareStatements>;

  /** `path` is the SQLite file Prisma uses; the schema must be migrated already. */
  constructor(path: string) {
    // No busy timeout, which would wait inside this thread: retryWhileBusy waits between turns.
    this.db = new Database(path, { timeout: 0 });
    this.statements = prepareStatements(this.db);
  }

  list(query: ListQuery): Promise<ListedPage> {
    const text = query.text?.trim();
    const base = { ownerId: query.ownerId, limit: query.limit, offset: query.offset };
    // Both statements run in one synchronous call: no write of this process can come between them.
    return retryWhileBusy(() => {
      if (!text) {
        const rows = this.statements.page.all(base);
        return { rows: rows.map(summaryOf), total: this.statements.count.get({ ownerId: query.ownerId })?.total ?? 0 };
      }
      const pattern = containsPattern(text);
      const rows = this.statements.searchPage.all({ ...base, pattern });
      return { rows: rows.map(summaryOf), total: this.statements.searchCount.get({ ownerId: query.ownerId, pattern })?.total ?? 0 };
    });
  }

  find(id: string): Promise<StoredConversation | null> {
    return retryWhileBusy(() => {
      const row = this.statements.find.get(id);
      return row ? { ...summaryOf(row), ownerId: row.ownerId, metadata: jsonOf(row.metadata) } : null;
    });
  }

  messages(conversationId: string): Promise<MessageViewRow[]> {
    return retryWhileBusy(() =>
      this.statements.messages.all(conversationId).map((row) => ({
        ...row,
        createdAt: dateOf(row.createdAt),
        toolCalls: jsonOf(row.toolCalls),
        usage: jsonOf(row.usage),
      })),
    );
  }

  ping(): Promise<void> {
    return retryWhileBusy(() => {
      this.statements.ping.get();
    });
  }

  close(): Promise<void> {
    this.db.close();
    return Promise.resolve();
  }
}
