import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { retryWhileBusy } from './sqlite-busy.js';
import { STEP_BUDGET_MS, prepareLongWalk, walkLongMessages, type LongWalkStatements } from './sqlite-conversation-reads-long.js';
import { ListedPageSelection, type ListedRow } from './sqlite-conversation-reads-order.js';
import type { ScanRequest, ScanRow } from './sqlite-conversation-reads-scan.js';

// A search text of three characters or more is looked up in the FTS5 trigram index
// "ConversationSearch" in steps of a few milliseconds with the event loop free between them: a
// text found in every message (a common word over 200,000 messages) took one statement of about
// 200 ms before (BENCHMARKS.md, "Conversation search"). Each step reads the index over the next
// range of rowids, as wide as fits in STEP_TARGET_MS at the pace of the steps before, and
// returns the caller's listed conversations among its matches: counted once each, and the page
// kept without sorting them all (sqlite-conversation-reads-order.ts). No statement stays open
// across a step (better-sqlite3 runs nothing else on a connection while one does). Like the
// short-text scan, a write landing between two steps may or may not be seen.
//
// Steps are ranges of rowids, not counts of matches: a step asking for the next N matches of a
// rare text read the index until it found them, or to its end (under the hostile mix such steps
// held the loop for 36 ms at p99 and 73 ms at most, profiled), where a range bounds what a step
// reads whatever the text.
//
// The rowid bounds must be bound as integers (BigInts): FTS5 takes a rowid bound only when its
// value is an SQLite INTEGER (fts5GetRowidLimit in fts5_main.c), and better-sqlite3 binds a
// JavaScript number as a REAL, with which each step would read the index from its start again
// (50–130 ms per step at the end of 200,000 matches, measured, instead of under 1 ms).

/** Index rowids read in the first step; later steps size themselves to STEP_TARGET_MS. */
const FIRST_STEP_ROWIDS = 2048;
const MIN_STEP_ROWIDS = 256;
/** How much wider than the one before a step may be: a fast step may be followed by a dear range. */
const MAX_STEP_GROWTH = 4;
/** What a step aims at, below STEP_BUDGET_MS, since its size is chosen from the step before. */
const STEP_TARGET_MS = STEP_BUDGET_MS * 0.75;

export interface LookUpRequest extends ScanRequest {
  /** The search text as one FTS5 phrase (fts5Phrase). */
  phrase: string;
}

interface StepParameters {
  phrase: string;
  from: bigint;
  to: bigint;
  ownerId: string;
  at: string | null;
  id: string | null;
}

/** One of the owner's listed conversations among a step's matches; `inPage` is 1 when it lies after the request's cursor (or there is none). */
type StepRow = ListedRow & { inPage: number };

export interface LookUpStatements {
  index: Database.Statement<[StepParameters], StepRow>;
  lastEntry: Database.Statement<[], { last: number | null }>;
  long: LongWalkStatements;
}

export function prepareLookUp(db: Database.Database): LookUpStatements {
  return { index: prepareIndexStep(db), lastEntry: db.prepare('SELECT MAX(id) AS last FROM "ConversationSearchEntry"'), long: prepareLongWalk(db) };
}

function prepareIndexStep(db: Database.Database): Database.Statement<[StepParameters], StepRow> {
  // The index is read in rowid order, its own order, over the step's range; the conversations are then looked up by id (a few per step: a conversation's
  // messages mostly sit next to each other in the index). CROSS JOIN keeps that order: left to
  // itself the planner walks all of the owner's conversations and probes the step's ids (seconds
  // for 10,000 conversations). The owner, listed and cursor tests are the list's, word for word,
  // so values compare as SQLite compares them there.
  return db.prepare<[StepParameters], StepRow>(
    `WITH hit AS MATERIALIZED (
       SELECT rowid AS entry FROM "ConversationSearch" WHERE "ConversationSearch" MATCH @phrase AND rowid > @from AND rowid <= @to),
     found AS (
       SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount",
              (@at IS NULL OR (c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @id))) AS "inPage"
       FROM (SELECT DISTINCT e."conversationId" AS id FROM hit JOIN "ConversationSearchEntry" e ON e.id = hit.entry) f
       CROSS JOIN "Conversation" c ON c.id = f.id
       WHERE c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> ''))
     SELECT * FROM found`,
  );
}

/**
 * Looks the phrase up for the owner: how many listed conversations match, and the page of them.
 * The index finds the text in titles and in messages' first INDEXED_CHARACTERS characters
 * (sqlite-conversation-reads-long.ts); the long messages are then searched whole, so together
 * they cover every character.
 */
export async function lookUpConversations(statements: LookUpStatements, request: LookUpRequest): Promise<{ rows: ScanRow[]; total: number }> {
  const statement = statements.index;
  const counted = new Set<string>();
  const selection = new ListedPageSelection<ScanRow>(request.offset, request.take);
  const cursor = request.after ?? { at: null, id: null };
  const found = (row: ListedRow) => {
    selection.add(row);
  };
  // The messages the index does not hold yet come first, and the index's last entry is read after
  // them: a message the indexer moves meanwhile was either still pending when its turn came here,
  // or already has an entry within the range read below. (The growing answers first, for the same
  // reason: one stored whole goes to the pending list.)
  await walkLongMessages(statements.long, ['growing', 'pending'], request, counted, found);
  // Entries written after this are beyond the last step; like any write during the steps, they may or may not be seen.
  const last = BigInt((await retryWhileBusy(() => statements.lastEntry.get()))?.last ?? 0);
  let from = 0n;
  let span = FIRST_STEP_ROWIDS;
  /** Rowids read per millisecond, averaged over the steps so far, so that one fast step does not size the next far too big. */
  let pace: number | null = null;
  while (from < last) {
    const to = from + BigInt(span);
    const parameters = { phrase: request.phrase, from, to, ownerId: request.ownerId, ...cursor };
    const started = performance.now();
    const rows = await retryWhileBusy(() => statement.all(parameters));
    const elapsed = performance.now() - started;
    for (const row of rows) {
      // A conversation whose matches span two steps comes back from both.
      if (counted.has(row.id)) continue;
      counted.add(row.id);
      if (row.inPage === 1) selection.add({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
    }
    from = to;
    const stepPace = span / Math.max(elapsed, 0.05);
    pace = pace === null ? stepPace : (pace + stepPace) / 2;
    span = Math.round(Math.min(span * MAX_STEP_GROWTH, Math.max(MIN_STEP_ROWIDS, pace * STEP_TARGET_MS)));
    if (from < last) await nextTurn();
  }
  await walkLongMessages(statements.long, ['long'], request, counted, found);
  return { rows: selection.page(), total: counted.size };
}
