import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { globPattern, likeFoldsAlike, likePattern, likeSupersetPattern } from './conversation-search-patterns.js';
import { retryWhileBusy } from './sqlite-busy.js';
import type { ListedRow } from './sqlite-conversation-reads-order.js';

// The messages longer than the head the search index holds (INDEXED_CHARACTERS), searched whole,
// one message per statement, with the event loop given back whenever a step has used its budget.
// A statement over a whole conversation's long messages was unbounded: a conversation that
// collected 230 questions of 100,000 characters held the loop 100–250 ms in one GLOB. Now a
// statement reads at most one message, which the body limit bounds (1 MB: about 6 ms for GLOB,
// under 1 ms for LIKE), and the messages are listed from the partial index without reading them.
// The answers still growing are walked the same way: the index holds an answer from the moment it
// is whole (the search_growing_answers migration), so a search reads the live ones in full. So are
// the messages stored whole and not yet in the index (the search_pending migration: they are
// moved into it a step at a time, sqlite-search-indexer.ts).

/** How long one step of a search may read before it lets the event loop serve others (the scan's, the lookup's and these). */
export const STEP_BUDGET_MS = 4;

/**
 * Messages are indexed by their first INDEXED_CHARACTERS characters (the conversation-search
 * migration's triggers); the longer ones are listed by the partial index "Message_long_idx".
 */
export const INDEXED_CHARACTERS = 4096;
/**
 * A character takes at most 4 UTF-8 bytes, so a message of more bytes than this is long (listed
 * by the partial index). `octet_length`, which SQLite answers from the record's header without
 * reading the text, keeps such messages out of a whole-conversation scan, which then reads at
 * most 16 KB a message; the long ones are walked here.
 */
export const SHORT_MESSAGE_BYTES = INDEXED_CHARACTERS * 4;
/** Long messages listed per statement (index entries only: cheap). */
const LISTED_PER_STATEMENT = 512;

interface ListParameters {
  ownerId: string;
  conversation: string;
  /** The position within the conversation the statement before reached: a rowid, or a message id for the pending list. */
  after: bigint | string;
  size: number;
}

interface ListedLong {
  conversationId: string;
  /** The message's rowid, which the checks read it by. */
  entry: number;
  after: number | string;
}

/** The messages the index does not cover (whole, or at all): long ones, growing answers, those still pending. */
export type UnindexedKind = 'long' | 'growing' | 'pending';

export interface LongWalkStatements {
  lists: Record<UnindexedKind, Database.Statement<[ListParameters], ListedLong>>;
  like: Database.Statement<[{ entry: bigint; pattern: string }], { hit: number }>;
  glob: Database.Statement<[{ entry: bigint; pattern: string; superset: string }], { hit: number }>;
  conversation: Database.Statement<[{ id: string; ownerId: string; at: string | null; cursorId: string | null }], ListedRow & { inPage: number }>;
}

function listThrough(db: Database.Database, index: string, indexed: string): Database.Statement<[ListParameters], ListedLong> {
  return db.prepare<[ListParameters], ListedLong>(
    `SELECT m."conversationId" AS "conversationId", m.rowid AS entry, m.rowid AS after
     FROM "Message" m INDEXED BY "${index}" CROSS JOIN "Conversation" c ON c.id = m."conversationId"
     WHERE ${indexed} AND (m."conversationId", m.rowid) > (@conversation, @after)
       AND c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> '')
     ORDER BY m."conversationId", m.rowid LIMIT @size`,
  );
}

export function prepareLongWalk(db: Database.Database): LongWalkStatements {
  return {
    // The owner's listed conversations' long messages in (conversation, rowid) order, after the
    // last one the statement before listed, and then the same for the answers still growing: the
    // index holds an answer once it is whole (the search_growing_answers migration), so until
    // then it is read here in full. CROSS JOIN keeps the partial index first: it is short (only
    // long messages, only live answers), where the owner's conversations may be 300,000. Each
    // WHERE clause repeats its partial index's word for word, as SQLite needs to use it (it then
    // reads no text).
    lists: {
      long: listThrough(db, 'Message_long_idx', `length(m."content") > ${INDEXED_CHARACTERS}`),
      growing: listThrough(db, 'Message_growing_idx', 'm."streaming" = 1'),
      // The messages stored whole and not yet moved into the index (sqlite-search-indexer.ts), in
      // the pending list's key order: a few hundred at most, unless an import or a stop left more.
      pending: db.prepare<[ListParameters], ListedLong>(
        `SELECT p."conversationId" AS "conversationId", m.rowid AS entry, p."messageId" AS after
         FROM "ConversationSearchPending" p CROSS JOIN "Conversation" c ON c.id = p."conversationId"
         JOIN "Message" m ON m.id = p."messageId"
         WHERE (p."conversationId", p."messageId") > (@conversation, @after)
           AND c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> '')
         ORDER BY p."conversationId", p."messageId" LIMIT @size`,
      ),
    },
    like: db.prepare(`SELECT 1 AS hit FROM "Message" WHERE rowid = @entry AND "content" LIKE @pattern ESCAPE '\\'`),
    // WHERE terms are tested in order, each only when the one before held: GLOB reads only texts
    // the superset LIKE let through.
    glob: db.prepare(`SELECT 1 AS hit FROM "Message" WHERE rowid = @entry AND "content" LIKE @superset ESCAPE '\\' AND "content" GLOB @pattern`),
    conversation: db.prepare(
      `SELECT c.id, c.title, c."createdAt", c."lastModified", c."messageCount",
              (@at IS NULL OR (c."lastModified" <= @at AND (c."lastModified" < @at OR c.id > @cursorId))) AS "inPage"
       FROM "Conversation" c WHERE c.id = @id AND c."ownerId" = @ownerId AND (c."messageCount" > 0 OR c."title" <> '')`,
    ),
  };
}

export interface LongWalkRequest {
  ownerId: string;
  text: string;
  after: { at: string; id: string } | null;
}

/**
 * Finds the owner's listed conversations, not yet in `counted`, with a message of the `kinds`
 * holding the text anywhere; adds each to `counted` and, when it lies after the request's cursor,
 * hands it to `found`. A write landing between two statements may or may not be seen, as in the
 * steps before it.
 */
export async function walkLongMessages(
  statements: LongWalkStatements,
  kinds: readonly UnindexedKind[],
  request: LongWalkRequest,
  counted: Set<string>,
  found: (row: ListedRow) => void,
): Promise<void> {
  const like = likeFoldsAlike(request.text);
  const likeParameters = { pattern: likePattern(request.text) };
  const globParameters = { pattern: globPattern(request.text), superset: likeSupersetPattern(request.text) };
  const check = (entry: bigint): boolean =>
    (like ? statements.like.get({ entry, ...likeParameters }) : statements.glob.get({ entry, ...globParameters })) !== undefined;
  let stepStarted = performance.now();
  for (const kind of kinds) {
    const list = statements.lists[kind];
    let from: { conversation: string; after: bigint | string } = { conversation: '', after: kind === 'pending' ? '' : 0n };
    for (;;) {
      const listed = await retryWhileBusy(() => list.all({ ownerId: request.ownerId, ...from, size: LISTED_PER_STATEMENT }));
      for (const { conversationId, entry, after } of listed) {
        // A rowid as an integer, so SQLite compares it with the rowid as an INTEGER (see the lookup's note).
        from = { conversation: conversationId, after: typeof after === 'number' ? BigInt(after) : after };
        if (counted.has(conversationId)) continue;
        if (performance.now() - stepStarted > STEP_BUDGET_MS) {
          await nextTurn();
          stepStarted = performance.now();
        }
        const position = BigInt(entry);
        if (!(await retryWhileBusy(() => check(position)))) continue;
        counted.add(conversationId);
        const cursor = { at: request.after?.at ?? null, cursorId: request.after?.id ?? null };
        const row = await retryWhileBusy(() => statements.conversation.get({ id: conversationId, ownerId: request.ownerId, ...cursor }));
        if (row?.inPage === 1) found({ id: row.id, title: row.title, createdAt: row.createdAt, lastModified: row.lastModified, messageCount: row.messageCount });
      }
      if (listed.length < LISTED_PER_STATEMENT) break;
    }
  }
}
