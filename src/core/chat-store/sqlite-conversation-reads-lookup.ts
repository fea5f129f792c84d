import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { globPattern, likeFoldsAlike, likePattern } from './conversation-search-patterns.js';
import { retryWhileBusy } from './sqlite-busy.js';
import { ListedPageSelection, type ListedRow } from './sqlite-conversation-reads-order.js';
import { STEP_BUDGET_MS, type ScanRequest, type ScanRow } from './sqlite-conversation-reads-scan.js';

// A search text of three characters or more is looked up in the FTS5 trigram index
// "ConversationSearch" in steps of a few milliseconds with the event loop free between them: a
// text found in every message (a common word over 200,000 messages) took one statement of about
// 200 ms before (BENCHMARKS.md, "Conversation search"). Each step reads the next matches in
// rowid order, after the last rowid the step before saw, as many as fit in STEP_TARGET_MS at the
// pace of the steps before, and returns the caller's listed conversations among them: counted
// once each, and the page kept without sorting them all (sqlite-conversation-reads-order.ts).
// No statement stays open across a step (better-sqlite3 runs nothing else on a connection while
// one does). Like the short-text scan, a write landing between two steps may or may not be seen.
//
// The rowid bound must be bound as an integer (a BigInt): FTS5 takes a rowid bound only when its
// value is an SQLite INTEGER (fts5GetRowidLimit in fts5_main.c), and better-sqlite3 binds a
// JavaScript number as a REAL, with which each step would read the index from its start again
// (50–130 ms per step at the end of 200,000 matches, measured, instead of under 1 ms).

/** Index matches read in the first step; later steps size themselves to STEP_TARGET_MS. */
const FIRST_STEP_MATCHES = 256;
const MIN_STEP_MATCHES = 64;
const MAX_STEP_MATCHES = 16_384;
/** What a step aims at, below STEP_BUDGET_MS, since its size is chosen from the step before. */
const STEP_TARGET_MS = STEP_BUDGET_MS * 0.75;

export interface LookUpRequest extends ScanRequest {
  /** The search text as one FTS5 phrase (fts5Phrase). */
  phrase: string;
}

/**
 * Messages are indexed by their first INDEXED_CHARACTERS characters (the migration's triggers);
 * the messages longer than that, listed by the partial index "Message_long_idx", are searched
 * whole here, LONG_STEP_CONVERSATIONS conversations a step.
 */
const INDEXED_CHARACTERS = 4096;
const LONG_STEP_CONVERSATIONS = 16;

interface StepParameters {
  phrase: string;
  from: bigint;
  size: bigint;
  ownerId: string;
  at: string | null;
  id: string | null;
}

/**
 * A step's matches counted (`matches`, the last one's rowid in `last`), and one row per listed
 * conversation of the owner among them; a lone row with NULL conversation columns when there is
 * none. `inPage` is 1 when the conversation lies after the request's cursor (or there is none).
 */
type StepRow = { matches: number; last: number | null } & (
  | (ListedRow & { inPage: number })
  | { [K in keyof ListedRow | 'inPage']: null }
);

interface LongStepParameters {
  pattern: string;
  from: string;
  size: number;
  ownerId: string;
  at: string | null;
  id: string | null;
}

/** As StepRow, for a step over the conversations holding long messages: `last` is a conversation id. */
type LongStepRow = { matches: number; last: string | null } & (
  | (ListedRow & { inPage: number })
  | { [K in keyof ListedRow | 'inPage']: null }
);

export interface LookUpStatements {
  index: Database.Statement<[StepParameters], StepRow>;
  long: { like: Database.Statement<[LongStepParameters], LongStepRow>; glob: Database.Statement<[LongStepParameters], LongStepRow> };
}

export function prepareLookUp(db: Database.Database): LookUpStatements {
  return { index: prepareIndexStep(db), long: { like: prepareLongStep(db, 'LIKE'), glob: prepareLongStep(db, 'GLOB') } };
}

/**
 * A step over the conversations that hold a message longer than the indexed head, in id order
 * through the partial index: the caller's listed ones among them whose long messages hold the
 * pattern anywhere. `length(...) > 4096` is the index's WHERE clause, word for word, as SQLite
 * needs to use it.
 */
function prepareLongStep(db: Database.Database, operator: 'LIKE' | 'GLOB'): Database.Statement<[LongStepParameters], LongStepRow> {
  const escape = operator === 'LIKE' ? ` ESCAPE '\\'` : '';
  return db.prepare<[LongStepParameters], LongStepRow>(
    `WITH step AS MATERIALIZED (
       SELECT DISTINCT m."conversationId" AS id FROM "Message" m
       WHERE length(m."content") > ${INDEXED_CHARACTERS} AND m."conversationId" > @from ORDER BY m."conversationId" LIMIT @size),
     found AS (
       SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount",
              (@at IS NULL OR (c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id))) AS "inPage"
       FROM step CROSS JOIN "Conversation" c ON c.id = step.id
       WHERE c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> '')
         AND EXISTS (SELECT 1 FROM "Message" l WHERE l."conversationId" = c.id AND length(l."content") > ${INDEXED_CHARACTERS} AND l."content" ${operator} @pattern${escape}))
     SELECT p.matches, p.last, found.* FROM (SELECT COUNT(*) AS matches, MAX(id) AS last FROM step) p LEFT JOIN found ON 1`,
  );
}

function prepareIndexStep(db: Database.Database): Database.Statement<[StepParameters], StepRow> {
  // The index is read in rowid order, its own order, so a step reads only the matches it
  // counts; the conversations are then looked up by id (a few per step: a conversation's
  // messages mostly sit next to each other in the index). CROSS JOIN keeps that order: left to
  // itself the planner walks all of the owner's conversations and probes the step's ids (seconds
  // for 10,000 conversations). The owner, listed and cursor tests are the list's, word for word,
  // so values compare as SQLite compares them there.
  return db.prepare<[StepParameters], StepRow>(
    `WITH hit AS MATERIALIZED (
       SELECT rowid AS entry FROM "ConversationSearch" WHERE "ConversationSearch" MATCH @phrase AND rowid > @from ORDER BY rowid LIMIT @size),
     found AS (
       SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount",
              (@at IS NULL OR (c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id))) AS "inPage"
       FROM (SELECT DISTINCT e."conversationId" AS id FROM hit JOIN "ConversationSearchEntry" e ON e.id = hit.entry) f
       CROSS JOIN "Conversation" c ON c.id = f.id
       WHERE c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> ''))
     SELECT p.matches, p.last, found.* FROM (SELECT COUNT(*) AS matches, MAX(entry) AS last FROM hit) p LEFT JOIN found ON 1`,
  );
}

/**
 * Looks the phrase up for the owner: how many listed conversations match, and the page of them.
 * The index finds the text in titles and in messages' first INDEXED_CHARACTERS characters; the
 * long messages are then searched whole, so together they cover every character.
 */
export async function lookUpConversations(statements: LookUpStatements, request: LookUpRequest): Promise<{ rows: ScanRow[]; total: number }> {
  const statement = statements.index;
  const counted = new Set<string>();
  const selection = new ListedPageSelection<ScanRow>(request.offset, request.take);
  const cursor = request.after ?? { at: null, id: null };
  let from = 0n;
  let size = FIRST_STEP_MATCHES;
  /** Matches read per millisecond, averaged over the steps so far, so that one fast step does not size the next far too big. */
  let pace: number | null = null;
  for (;;) {
    const parameters = { phrase: request.phrase, from, size: BigInt(size), ownerId: request.ownerId, ...cursor };
    const started = performance.now();
    const rows = await retryWhileBusy(() => statement.all(parameters));
    const elapsed = performance.now() - started;
    for (const row of rows) {
      // A conversation whose matches span two steps comes back from both.
      if (row.id === null || counted.has(row.id)) continue;
      counted.add(row.id);
      if (row.inPage === 1) selection.add({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
    }
    const progress = rows[0];
    if (!progress || progress.last === null || progress.matches < size) break;
    from = BigInt(progress.last);
    const stepPace = size / Math.max(elapsed, 0.05);
    pace = pace === null ? stepPace : (pace + stepPace) / 2;
    size = Math.round(Math.min(MAX_STEP_MATCHES, size * 2, Math.max(MIN_STEP_MATCHES, pace * STEP_TARGET_MS)));
    await nextTurn();
  }
  const like = likeFoldsAlike(request.text);
  const long = like ? statements.long.like : statements.long.glob;
  const pattern = like ? likePattern(request.text) : globPattern(request.text);
  let fromConversation = '';
  for (;;) {
    const parameters = { pattern, from: fromConversation, size: LONG_STEP_CONVERSATIONS, ownerId: request.ownerId, ...cursor };
    const rows = await retryWhileBusy(() => long.all(parameters));
    for (const row of rows) {
      if (row.id === null || counted.has(row.id)) continue;
      counted.add(row.id);
      if (row.inPage === 1) selection.add({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
    }
    const progress = rows[0];
    if (!progress || progress.last === null || progress.matches < LONG_STEP_CONVERSATIONS) break;
    fromConversation = progress.last;
    await nextTurn();
  }
  return { rows: selection.page(), total: counted.size };
}
