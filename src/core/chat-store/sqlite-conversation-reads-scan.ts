import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { globPattern, likeFoldsAlike, likePattern } from './conversation-search-patterns.js';
import { retryWhileBusy } from './sqlite-busy.js';

// A search text shorter than a trigram cannot be looked up in the FTS5 index, so the caller's
// own conversations are scanned (never anyone else's): newest first, in steps of a few
// milliseconds with the event loop free between them, so a scan of 200,000 messages delays no
// other request by more than a step. The total stays exact: every conversation is looked at.
// The steps are separate reads, so a write landing between two of them may or may not be seen.

/** How long one step may read before it lets the event loop serve others (the FTS5 lookup's steps too). */
export const STEP_BUDGET_MS = 4;

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

function matching(operator: 'LIKE' | 'GLOB'): string {
  const escape = operator === 'LIKE' ? ` ESCAPE '\\'` : '';
  return `(c.title ${operator} @pattern${escape}
    OR EXISTS (SELECT 1 FROM "Message" m WHERE m."conversationId" = c.id AND m.content ${operator} @pattern${escape}))`;
}

interface ScanStatements {
  first: Database.Statement<[{ ownerId: string; pattern: string }], StepRow>;
  next: Database.Statement<[{ ownerId: string; pattern: string; at: string | number; id: string }], StepRow>;
}

export function prepareScan(db: Database.Database): { like: ScanStatements; glob: ScanStatements } {
  const statements = (operator: 'LIKE' | 'GLOB'): ScanStatements => ({
    first: db.prepare<[{ ownerId: string; pattern: string }], StepRow>(`SELECT ${columns}, ${matching(operator)} AS hit FROM "Conversation" c WHERE ${listed} ${order}`),
    next: db.prepare<[{ ownerId: string; pattern: string; at: string | number; id: string }], StepRow>(
      `SELECT ${columns}, ${matching(operator)} AS hit FROM "Conversation" c
       WHERE ${listed} AND c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id) ${order}`,
    ),
  });
  return { like: statements('LIKE'), glob: statements('GLOB') };
}

/** Scans the owner's conversations for `text`: how many match, and the page of them. */
export async function scanConversations(scan: { like: ScanStatements; glob: ScanStatements }, request: ScanRequest): Promise<{ rows: ScanRow[]; total: number }> {
  // LIKE is several times faster than GLOB with a class per letter, and exact where it folds alike.
  const like = likeFoldsAlike(request.text);
  const statements = like ? scan.like : scan.glob;
  const pattern = like ? likePattern(request.text) : globPattern(request.text);
  const page: ScanRow[] = [];
  let total = 0;
  let skipped = 0;
  let resume: { at: string | number; id: string } | null = null;
  let done = false;
  const inPage = (row: ScanRow) =>
    request.after === null || row.lastModified < request.after.at || (row.lastModified === request.after.at && row.id > request.after.id);
  while (!done) {
    const from = resume;
    const step = await retryWhileBusy(() => {
      const deadline = performance.now() + STEP_BUDGET_MS;
      const rows = from === null ? statements.first.iterate({ ownerId: request.ownerId, pattern }) : statements.next.iterate({ ownerId: request.ownerId, pattern, ...from });
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
      total++;
      if (page.length < request.take && inPage(row)) {
        if (skipped < request.offset) skipped++;
        else page.push({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
      }
    }
    const last = step.seen.at(-1);
    done = step.finished || last === undefined;
    if (last) resume = { at: last.lastModified, id: last.id };
    if (!done) await nextTurn();
  }
  return { rows: page, total };
}
