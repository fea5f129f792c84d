// The import thread's program (sqlite-import-thread.ts starts it): plain CommonJS, evaluated, so
// there is nothing to build or to load through tsx, as the checkpointer's. It writes whole
// conversations and removes them in steps on a connection of its own, so the rows, the search
// index's triggers (~50 µs a message) and each step's commit cost the event loop nothing.
//
// The rules are those the event loop's writes followed before (sqlite-whole-conversation.ts): a
// conversation is written under IMPORTING_OWNER, which no reader asks for, and the step that
// writes its last messages hands it to its owner in the same commit, so readers see it whole or
// not at all; a failure removes what was written. Each step holds SQLite's write lock for at most
// STEP_BUDGET_MS, then the thread lets it go for PAUSE_MS: the event loop's writers never wait
// for a lock (they try again between turns), and Prisma's, which wait inside the event loop
// (its busy timeout), wait for one step at most. This thread's own waits (busy timeout) are its own.
//
// Messages (main → thread): {op:'insert', job, head, at, total}, then {op:'rows', job, rows} until
// `total` rows have come; {op:'remove', job, id, seqs}; {op:'stop'}. Replies: {job, ok:true} or
// {job, ok:false, error:{name, message, code}}.

import { INDEXED_CHARACTERS } from './sqlite-conversation-reads-long.js';

export const IMPORT_THREAD_SOURCE = `
'use strict';
const { workerData, parentPort } = require('node:worker_threads');
const { randomUUID } = require('node:crypto');
const { readlinkSync } = require('node:fs');
const { setPriority } = require('node:os');
const Database = require(workerData.driver);
const { importingOwner, stepBudgetMs, rowsPerRun, pauseMs, niceness } = workerData;

// On two cores this thread competes with the event loop for a core: a lower priority (Linux
// lets a thread lower its own) keeps bulk writing from taking the loop's time slices.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, niceness);
} catch {
  // Not Linux, or no /proc: the thread runs at the process's priority.
}

const db = new Database(workerData.path, { timeout: workerData.busyTimeoutMs });
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
const s = {
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  rollback: db.prepare('ROLLBACK'),
  head: db.prepare(
    'INSERT INTO "Conversation" (id, "ownerId", title, metadata, "messageCount", "nextSeq", "createdAt", "lastModified") VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ),
  message: db.prepare(
    'INSERT INTO "Message" (id, "conversationId", seq, role, content, "toolCalls", streaming, "createdAt") VALUES (?, ?, ?, ?, ?, ?, 0, ?)',
  ),
  publish: db.prepare('UPDATE "Conversation" SET "ownerId" = ? WHERE id = ? AND "ownerId" = ?'),
  // A step's messages enter the search index in the step's own commit, here off the event loop as
  // the rows themselves: the triggers leave every new message pending (the search_pending
  // migration), and these move the conversation's pending rows in one segment. New messages
  // have no entry yet, so whole sets do what the service's indexer does row by row.
  indexEntries: db.prepare(
    'INSERT INTO "ConversationSearchEntry" ("conversationId", "messageId") SELECT "conversationId", "messageId" FROM "ConversationSearchPending" WHERE "conversationId" = ?',
  ),
  indexTexts: db.prepare(
    'INSERT INTO "ConversationSearch" (rowid, "text") SELECT e.id, substr(m."content", 1, ${INDEXED_CHARACTERS}) FROM "ConversationSearchPending" p ' +
      'JOIN "ConversationSearchEntry" e ON e."messageId" = p."messageId" JOIN "Message" m ON m.id = p."messageId" WHERE p."conversationId" = ?',
  ),
  indexed: db.prepare('DELETE FROM "ConversationSearchPending" WHERE "conversationId" = ?'),
  // Through the ("conversationId", seq) index; each row also leaves the search index (its trigger).
  removeMessages: db.prepare('DELETE FROM "Message" WHERE "conversationId" = ? AND seq >= ? AND seq < ?'),
  removeHead: db.prepare('DELETE FROM "Conversation" WHERE id = ? AND "ownerId" = ?'),
};

const incoming = new Map();
let stopping = false;
let running = 0;

/** One transaction: all of work() or none of it. */
function step(work) {
  s.begin.run();
  try {
    const result = work();
    s.commit.run();
    return result;
  } catch (error) {
    if (db.inTransaction) {
      try {
        s.rollback.run();
      } catch {
        // SQLite rolled back by itself (it does on some I/O errors).
      }
    }
    throw error;
  }
}

/** work() on rows [from, until) in runs of rowsPerRun until the step's time is used; where it stopped. */
function inSteps(from, until, work) {
  const deadline = performance.now() + stepBudgetMs;
  let next = from;
  do {
    const end = Math.min(next + rowsPerRun, until);
    work(next, end);
    next = end;
  } while (next < until && performance.now() < deadline);
  return next;
}

/** Between steps: the lock is free for the event loop's writers, and a stop is noticed. */
async function pause() {
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  if (stopping) throw Object.assign(new Error('The service is stopping'), { code: 'IMPORT_THREAD_STOPPING' });
}

async function insert(job) {
  const { head, at, rows } = job;
  let written = 0;
  let started = false;
  try {
    do {
      const from = written;
      written = step(() => {
        if (from === 0) s.head.run(head.id, importingOwner, head.title, head.metadata, head.messageCount, rows.length, at, at);
        const end = inSteps(from, rows.length, (start, stop) => {
          for (let seq = start; seq < stop; seq++) {
            const row = rows[seq];
            s.message.run(randomUUID(), head.id, seq, row.role, row.content, row.toolCalls, at);
          }
        });
        s.indexEntries.run(head.id);
        s.indexTexts.run(head.id);
        s.indexed.run(head.id);
        if (end === rows.length) s.publish.run(head.ownerId, head.id, importingOwner);
        return end;
      });
      started = true;
      if (written < rows.length) await pause();
    } while (written < rows.length);
  } catch (error) {
    // The failed step was undone whole; the steps before it are unowned and go now. Should this
    // fail too (or the service stop), a later import's sweep removes them once they are old.
    if (started && !stopping) await remove(head.id, rows.length).catch(() => undefined);
    throw error;
  }
}

async function remove(id, seqs) {
  let removed = 0;
  while (removed < seqs) {
    const from = removed;
    removed = step(() => inSteps(from, seqs, (start, end) => s.removeMessages.run(id, start, end)));
    await pause();
  }
  step(() => s.removeHead.run(id, importingOwner));
}

function errorOf(error) {
  return { name: String(error && error.name), message: String(error && error.message), code: error && typeof error.code === 'string' ? error.code : undefined };
}

function run(job, work) {
  running++;
  work().then(
    () => parentPort.postMessage({ job, ok: true }),
    (error) => parentPort.postMessage({ job, ok: false, error: errorOf(error) }),
  ).finally(() => {
    running--;
    if (stopping && running === 0) close();
  });
}

function close() {
  db.close();
  parentPort.close();
}

parentPort.on('message', (message) => {
  if (message.op === 'stop') {
    stopping = true;
    if (running === 0) close();
  } else if (message.op === 'insert') {
    const job = { head: message.head, at: message.at, total: message.total, rows: [] };
    if (job.total === 0) run(message.job, () => insert(job));
    else incoming.set(message.job, job);
  } else if (message.op === 'rows') {
    const job = incoming.get(message.job);
    for (const row of message.rows) job.rows.push(row);
    if (job.rows.length === job.total) {
      incoming.delete(message.job);
      run(message.job, () => insert(job));
    }
  } else if (message.op === 'remove') {
    run(message.job, () => remove(message.id, message.seqs));
  }
});
`;
