import Database from 'better-sqlite3';
import type { Prisma } from '../../generated/sqlite/client.js';
import type { ListPosition } from '../conversations/conversation-list-cursor.js';
import type { ConversationSummaryRow, MessageViewRow } from '../conversations/conversation-views.js';
import { searchText, type ConversationReads, type ListedPage, type ListQuery, type StoredConversation } from './conversation-reads.js';
import { characters, fts5Phrase, TRIGRAM_LENGTH } from './conversation-search-patterns.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { lookUpConversations, prepareLookUp, type LookUpStatements } from './sqlite-conversation-reads-lookup.js';
import { prepareScan, scanConversations } from './sqlite-conversation-reads-scan.js';

// The conversation reads on SQLite, on a connection of their own (WAL lets it read beside the
// writers). Values come back as Prisma stores them: DateTime as ISO text, JSON as text.
//
// The list walks the partial index "Conversation_listed_idx" (prisma/sqlite/migrations/
// *_conversation_search): `listed` below repeats its WHERE clause word for word, which SQLite
// needs to use it. A search of three characters or more looks its text up in the FTS5 trigram
// index "ConversationSearch" in short steps (sqlite-conversation-reads-lookup.ts): the matching
// conversations are gathered, counted, and the page taken from them. Shorter texts, which
// trigrams cannot look up, are scanned over the caller's own conversations in short steps
// (sqlite-conversation-reads-scan.ts).

const summaryColumns = `c.id, c.title, c."createdAt", c."lastModified", c."messageCount"`;
const listed = `c."ownerId" = @ownerId AND ("messageCount" > 0 OR "title" <> '')`;
/** After the cursor in the list's order (lastModified newest first, then id). */
const afterCursor = `c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id)`;
const newestFirst = `ORDER BY c."lastModified" DESC, c.id ASC LIMIT @limit OFFSET @offset`;

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
  supersededBy: string | null;
}

interface PageParameters {
  ownerId: string;
  limit: number;
  offset: number;
}

type CursorParameters = PageParameters & { at: string; id: string };

function prepareStatements(db: Database.Database) {
  return {
    page: db.prepare<[PageParameters], SummaryRow>(`SELECT ${summaryColumns} FROM "Conversation" c WHERE ${listed} ${newestFirst}`),
    pageAfter: db.prepare<[CursorParameters], SummaryRow>(
      `SELECT ${summaryColumns} FROM "Conversation" c WHERE ${listed} AND ${afterCursor} ${newestFirst}`,
    ),
    count: db.prepare<[Pick<PageParameters, 'ownerId'>], { total: number }>(`SELECT COUNT(*) AS total FROM "Conversation" c WHERE ${listed}`),
    find: db.prepare<[string], ConversationRow>(`SELECT id, title, "createdAt", "lastModified", "messageCount", "ownerId", metadata FROM "Conversation" WHERE id = ?`),
    ping: db.prepare<[], { one: number }>('SELECT 1 AS one'),
    messages: db.prepare<[string], MessageRow>(
      `SELECT id, role, content, "createdAt", "toolCalls", model, provider, "finishReason", usage, "supersededBy"
       FROM "Message" WHERE "conversationId" = ? ORDER BY seq`,
    ),
  };
}

/** As Prisma's better-sqlite3 adapter writes DateTime, so that stored values compare as text. */
function storedTimestamp(date: Date): string {
  return date.toISOString().replace('Z', '+00:00');
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

function cursorOf(position: ListPosition): { at: string; id: string } {
  return { at: storedTimestamp(position.lastModified), id: position.id };
}

function pageOf(rows: SummaryRow[], total: number, limit: number): ListedPage {
  return { rows: rows.slice(0, limit).map(summaryOf), total, more: rows.length > limit };
}

function summaryOf(row: SummaryRow): ConversationSummaryRow {
  return { id: row.id, title: row.title, createdAt: dateOf(row.createdAt), lastModified: dateOf(row.lastModified), messageCount: row.messageCount };
}

export class SqliteConversationReads implements ConversationReads {
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly scanStatements: ReturnType<typeof prepareScan>;
  private readonly lookUpStatements: LookUpStatements;

  /** `path` is the SQLite file Prisma uses; the schema must be migrated already. */
  constructor(path: string) {
    // No busy timeout, which would wait inside this thread: retryWhileBusy waits between turns.
    this.db = new Database(path, { timeout: 0 });
    this.statements = prepareStatements(this.db);
    this.scanStatements = prepareScan(this.db);
    this.lookUpStatements = prepareLookUp(this.db);
  }

  list(query: ListQuery): Promise<ListedPage> {
    const text = searchText(query.text);
    if (text !== null) return this.search(query, text);
    // One row more than the page tells whether another page follows.
    const page = { ownerId: query.ownerId, limit: query.limit + 1, offset: query.offset };
    // The page and its total are read in one synchronous call: no write of this process can come between them.
    return retryWhileBusy(() => {
      const rows = query.before ? this.statements.pageAfter.all({ ...page, ...cursorOf(query.before) }) : this.statements.page.all(page);
      return pageOf(rows, this.statements.count.get({ ownerId: query.ownerId })?.total ?? 0, query.limit);
    });
  }

  private async search(query: ListQuery, text: string): Promise<ListedPage> {
    const request = { ownerId: query.ownerId, after: query.before ? cursorOf(query.before) : null, offset: query.offset, take: query.limit + 1 };
    const { rows, total } =
      characters(text).length < TRIGRAM_LENGTH
        ? await scanConversations(this.scanStatements, { ...request, text })
        : await lookUpConversations(this.lookUpStatements, { ...request, text, phrase: fts5Phrase(text) });
    return pageOf(rows, total, query.limit);
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
