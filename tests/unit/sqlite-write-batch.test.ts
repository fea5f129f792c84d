import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { SqliteWriteBatch } from '../../src/core/chat-store/sqlite-write-batch.js';

// Group commit: the writes of one event-loop turn share a transaction, yet each succeeds or fails
// on its own, and a lock held by another connection is waited for between turns.

let folder: string;
let db: Database.Database;
let batch: SqliteWriteBatch;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'write-batch-'));
  db = new Database(join(folder, 'test.db'), { timeout: 0 });
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  batch = new SqliteWriteBatch(db);
});

afterEach(() => {
  db.close();
  rmSync(folder, { recursive: true, force: true });
});

const insert = (name: string) => () => db.prepare('INSERT INTO item (name) VALUES (?)').run(name).lastInsertRowid;
const names = () => (db.prepare('SELECT name FROM item ORDER BY id').all() as { name: string }[]).map((row) => row.name);

/** Frames written to the WAL since the last truncation: each commit writes every page it changed. */
function walFramesSince(): number {
  const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  db.pragma('wal_checkpoint(TRUNCATE)');
  return result?.log ?? 0;
}

it('commits the writes of one turn together, and settles each once committed', async () => {
  walFramesSince();
  const written = await Promise.all(['a', 'b', 'c', 'd'].map((name) => batch.run(insert(name))));
  const together = walFramesSince();
  for (const name of ['e', 'f', 'g', 'h']) await batch.run(insert(name));
  const apart = walFramesSince();
  expect(written).toEqual([1, 2, 3, 4]);
  expect(names()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  // One commit writes the table's and the index's page once; four commits write them four times.
  expect(together * 3).toBeLessThanOrEqual(apart);
  expect(db.inTransaction).toBe(false);
});

it('undoes a failing write alone: the others of its batch are committed', async () => {
  await batch.run(insert('taken'));
  const outcomes = await Promise.allSettled([
    batch.run(insert('first')),
    batch.run(() => {
      insert('partial')();
      return insert('taken')();
    }),
    batch.run(insert('last')),
  ]);
  expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect(String((outcomes[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
  // 'partial' went with the write that failed.
  expect(names()).toEqual(['taken', 'first', 'last']);
});

it('waits while another connection holds the write lock, without blocking the event loop', async () => {
  const other = new Database(join(folder, 'test.db'));
  other.exec('BEGIN IMMEDIATE');
  other.prepare('INSERT INTO item (name) VALUES (?)').run('other');
  const write = batch.run(insert('mine'));
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 5);
  await new Promise((resolve) => setTimeout(resolve, 60));
  expect(ticks).toBeGreaterThan(3);
  other.exec('COMMIT');
  await write;
  clearInterval(ticker);
  other.close();
  expect(names()).toEqual(['other', 'mine']);
});
