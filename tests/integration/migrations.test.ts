import { createHash } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { expect, it } from 'vitest';
import { sqliteFilePath } from '../../src/core/db/create-db.js';
import { migrate, readMigrations } from '../../src/core/db/migrate.js';
import { createTestDatabase, describeOnDatabases, type TestDatabase } from '../helpers/databases.js';

// The start-up migrator applies committed migrations once, keeps Prisma's bookkeeping, and
// refuses to start over a half-applied migration.

async function queryRows(database: TestDatabase, sql: string): Promise<Record<string, unknown>[]> {
  if (database.kind === 'sqlite') {
    const raw = new BetterSqlite3(sqliteFilePath(database.url));
    try {
      return raw.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

describeOnDatabases('migrator', (kind) => {
  it('applies every committed migration once and records it as Prisma does', async () => {
    const database = await createTestDatabase(kind);
    try {
      const migrations = readMigrations(kind);
      expect(migrations.length).toBeGreaterThan(0);
      const first = await migrate(database.url);
      expect(first).toEqual({ applied: migrations.map((m) => m.name), modified: [] });
      const second = await migrate(database.url);
      expect(second).toEqual({ applied: [], modified: [] });

      const rows = await queryRows(database, 'SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations"');
      expect(rows.map((row) => row.migration_name)).toEqual(migrations.map((m) => m.name));
      for (const row of rows) {
        const migration = migrations.find((m) => m.name === row.migration_name);
        expect(row.checksum).toBe(createHash('sha256').update(migration?.sql ?? '').digest('hex'));
        expect(row.finished_at).not.toBeNull();
      }
      const tables = await queryRows(
        database,
        kind === 'sqlite'
          ? "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Conversation'"
          : "SELECT table_name AS name FROM information_schema.tables WHERE table_name = 'Conversation'",
      );
      expect(tables).toHaveLength(1);
    } finally {
      await database.drop();
    }
  });

  it('applies a new migration on top, reports an edited one, and refuses a half-applied one', async () => {
    const database = await createTestDatabase(kind);
    try {
      const committed = readMigrations(kind);
      await migrate(database.url, committed);
      const next = { name: '99990101000000_probe', sql: 'CREATE TABLE "Probe" ("id" INTEGER NOT NULL PRIMARY KEY);', checksum: 'x'.repeat(64) };
      expect((await migrate(database.url, [...committed, next])).applied).toEqual([next.name]);

      const edited = committed.map((m, index) => (index === 0 ? { ...m, checksum: 'f'.repeat(64) } : m));
      expect((await migrate(database.url, [...edited, next])).modified).toEqual([committed[0]?.name]);

      const broken = { name: '99990102000000_broken', sql: 'CREATE TABLE "Broken" (;', checksum: 'b'.repeat(64) };
      await expect(migrate(database.url, [...committed, next, broken])).rejects.toThrow();
      // A failed migration leaves nothing behind: the table does not exist and the next start works.
      expect((await migrate(database.url, [...committed, next])).applied).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it('stops when the bookkeeping shows a migration that started and never finished', async () => {
    const database = await createTestDatabase(kind);
    try {
      const committed = readMigrations(kind);
      await migrate(database.url, committed);
      const unfinished = "INSERT INTO \"_prisma_migrations\" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ('00000000-0000-4000-8000-000000000001', 'c', '99990103000000_crashed', CURRENT_TIMESTAMP, 0)";
      await queryRows(database, unfinished).catch(() => {
        // better-sqlite3's all() refuses statements that return nothing; run it as a statement.
        const raw = new BetterSqlite3(sqliteFilePath(database.url));
        raw.exec(unfinished);
        raw.close();
      });
      await expect(migrate(database.url, committed)).rejects.toThrow(/99990103000000_crashed failed earlier/);
    } finally {
      await database.drop();
    }
  });
});
