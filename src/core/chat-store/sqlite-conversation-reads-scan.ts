import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { globPattern, likeFoldsAlike, likePattern, likeSupersetPattern } from './conversation-search-patterns.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { SHORT_MESSAGE_BYTES, STEP_BUDGET_MS, prepareLongWalk, walkLongMessages, type LongWalkStatements } from './sqlite-conversation-reads-long.js';
import { ListedPageSelection } from './sqlite-conversation-reads-order.js';

// A search text shorter than a trigram cannot be looked up in the FTS5 index, so the caller's
// own conversations are scanned (never anyone else's): newest first, in steps of a few
// milliseconds with the event loop free between them, so a scan of 200,000 messages delays no
// other request by more than a step. The total stays exact: every conversation is looked at.
// The steps are separate reads, so a write landing between two of them may or may not be seen.

export interface ScanRow {
  id: string;
  title: string;
  createdAt: string | number;
  lastModified: string | number;
  messageCount: number;
}

export interface ScanRequest {
  ownerId: string;
  text: string;
  /** The stored lastModified and id after which the page starts, if any. */
  after: { at: string; id: string } | null;
  offset: number;
  /** Rows wanted in the page (the caller asks one more than it shows). */
  take: number;
}

interface StepRow extends ScanRow {
  hit: number;
}

const columns = `c.id, c.title, c."createdAt", c."lastModified", c."messageCount"`;
const listed = `c."ownerId" = @ownerId AND ("messageCount" > 0 OR "title" <> '')`;
const order = `ORDER BY c."lastModified" DESC, c.id ASC`;

/**
 * Whether the title or a message of at most SHORT_MESSAGE_BYTES holds the text: the longer
 * messages, which could make one conversation's test read hundreds of MB in one statement, are
 * walked one by one after the scan (sqlite-conversation-reads-long.ts). GLOB, with a class per
 * letter, runs only where the superset LIKE before it held (conversation-search-patterns.ts).
 */
function matching(operator: 'LIKE' | 'GLOB'): string {
  const test = (column: string) =>
    operator === 'LIKE' ? `${column} LIKE @pattern ESCAPE '\\'` : `${column} LIKE @superset ESCAPE '\\' AND ${column} GLOB @pattern`;
  return `((${test('c.title')})
    OR EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND octet_length(m.content) <= ${SHORT_MESSAGE_BYTES} AND ${test('m.content')}))`;
}

interface ScanParameters {
  ownerId: string;
  pattern: string;
  /** Used by the GLOB statements only (likeSupersetPattern). */
  superset: string;
}

interface ScanStatements {
  first: Database.Statement<[ScanParameters], StepRow>;
  next: Database.Statement<[ScanParameters & { at: string | number; id: string }], StepRow>;
}

export interface PreparedScan {
  like: ScanStatements;
  glob: ScanStatements;
  long: LongWalkStatements;
}

export function prepareScan(db: Database.Database): PreparedScan {
  const statements = (operator: 'LIKE' | 'GLOB'): ScanStatements => ({
    first: db.prepare<[ScanParameters], StepRow>(`SELECT ${columns}, ${matching(operator)} AS hit FROM "Conversation" c WHERE ${listed} ${order}`),
    next: db.prepare<[ScanParameters & { at: string | number; id: string }], StepRow>(
      `SELECT ${columns}, ${matching(operator)} AS hit FROM "Conversation" c
       WHERE ${listed} AND c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id) ${order}`,
    ),
  });
  return { like: statements('LIKE'), glob: statements('GLOB'), long: prepareLongWalk(db) };
}

/** Scans the owner's conversations for `text`: how many match, and the page of them. */
export async function scanConversations(scan: PreparedScan, request: ScanRequest): Promise<{ rows: ScanRow[]; total: number }> {
  // LIKE is several times faster than GLOB with a class per letter, and exact where it folds alike.
  const like = likeFoldsAlike(request.text);
  const statements = like ? scan.like : scan.glob;
  const parameters = { ownerId: request.ownerId, pattern: like ? likePattern(request.text) : globPattern(request.text), superset: likeSupersetPattern(request.text) };
  const counted = new Set<string>();
  const selection = new ListedPageSelection<ScanRow>(request.offset, request.take);
  let resume: { at: string | number; id: string } | null = null;
  let done = false;
  const inPage = (row: ScanRow) =>
    request.after === null || row.lastModified < request.after.at || (row.lastModified === request.after.at && row.id > request.after.id);
  while (!done) {
    const from = resume;
    const step = await retryWhileBusy(() => {
      const deadline = performance.now() + STEP_BUDGET_MS;
      const rows = from === null ? statements.first.iterate(parameters) : statements.next.iterate({ ...parameters, ...from });
      const seen: StepRow[] = [];
      for (const row of rows) {
        seen.push(row);
        if (performance.now() > deadline) {
          rows.return?.();
          return { seen, finished: false };
        }
      }
      return { seen, finished: true };
    });
    for (const row of step.seen) {
      if (row.hit !== 1) continue;
      counted.add(row.id);
      if (inPage(row)) selection.add({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
    }
    const last = step.seen.at(-1);
    done = step.finished || last === undefined;
    if (last) resume = { at: last.lastModified, id: last.id };
    if (!done) await nextTurn();
  }
  // The scan reads every short message itself, pending ones included.
  await walkLongMessages(scan.long, ['long', 'growing'], request, counted, (row) => {
    selection.add(row);
  });
  return { rows: selection.page(), total: counted.size };
}
