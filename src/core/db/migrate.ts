import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import type { DatabaseKind } from '../config/load-config.js';
import { databaseOpenFailure } from '../config/startup-failure.js';
import { sqliteFilePath } from './create-db.js';

// Applies the committed SQL migrations at start-up. `prisma migrate deploy` cannot run through
// the PostgreSQL driver adapter (prisma/orm#27403), so this does the same job and keeps Prisma's
// `_prisma_migrations` bookkeeping, so the Prisma CLI still reads the state correctly.

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  /** Applied migrations whose file changed since (Prisma warns about these too). */
  modified: string[];
}

const migrationsRoot = fileURLToPath(new URL('../../../prisma/', import.meta.url));

// Prisma's own lock id for migrations, so this and the Prisma CLI never migrate at the same time.
const ADVISORY_LOCK_ID = 72707369;

export function readMigrations(kind: DatabaseKind, root = migrationsRoot): Migration[] {
  const folder = `${root}${kind}/migrations`;
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(`${folder}/${name}/migration.sql`, 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
  rolled_back_at: unknown;
}

/** Decides what to run; a migration that started and never finished stops the start-up. */
function plan(migrations: Migration[], rows: AppliedRow[]): { pending: Migration[]; modified: string[] } {
  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null);
  if (failed) {
    throw new Error(
      `Migration ${failed.migration_name} failed earlier and left the database half-migrated; ` +
        'repair it and mark it rolled back in _prisma_migrations before starting again',
    );
  }
  const done = new Map(
    rows.filter((row) => row.rolled_back_at === null).map((row) => [row.migration_name, row.checksum]),
  );
  return {
    pending: migrations.filter((migration) => !done.has(migration.name)),
    modified: migrations
      .filter((migration) => done.has(migration.name) && done.get(migration.name) !== migration.checksum)
      .map((migration) => migration.name),
  };
}

export async function migrate(url: string, migrations?: Migration[]): Promise<MigrationResult> {
  if (url.startsWith('file:')) return migrateSqlite(url, migrations ?? readMigrations('sqlite'));
  return migratePostgres(url, migrations ?? readMigrations('postgresql'));
}

function migrateSqlite(url: string, migrations: Migration[]): MigrationResult {
  const path = sqliteFilePath(url);
  let sqlite: BetterSqlite3.Database | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true });
    sqlite = new BetterSqlite3(path, { timeout: 10_000 });
    sqlite.pragma('journal_mode = WAL');
  } catch (error) {
    // The first touch of the database at start-up: a folder that cannot be made or a file that
    // is not a database is reported naming DATABASE_URL.
    sqlite?.close();
    throw databaseOpenFailure(url, error);
  }
  try {
    sqlite.exec(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" TEXT PRIMARY KEY NOT NULL,
      "checksum" TEXT NOT NULL,
      "finished_at" DATETIME,
      "migration_name" TEXT NOT NULL,
      "logs" TEXT,
      "rolled_back_at" DATETIME,
      "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
      "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
    )`);
    const applied: string[] = [];
    // BEGIN IMMEDIATE takes the write lock before reading the bookkeeping, so two processes
    // starting together cannot both apply the same migration.
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      const rows = sqlite.prepare('SELECT * FROM "_prisma_migrations"').all() as AppliedRow[];
      const { pending, modified } = plan(migrations, rows);
      const record = sqlite.prepare(
        `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
         VALUES (?, ?, ?, ?, ?, 1)`,
      );
      for (const migration of pending) {
        const startedAt = new Date().toISOString();
        sqlite.exec(migration.sql);
        record.run(randomUUID(), migration.checksum, new Date().toISOString(), migration.name, startedAt);
        applied.push(migration.name);
      }
      sqlite.exec('COMMIT');
      return { applied, modified };
    } catch (error) {
      sqlite.exec('ROLLBACK');
      throw error;
    }
  } finally {
    sqlite.close();
  }
}

async function migratePostgres(url: string, migrations: Migration[]): Promise<MigrationResult> {
  // Loaded only for PostgreSQL: the embedded SQLite default never needs the driver (~10 MB).
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  // The first touch of the database at start-up: a server that is not there, a database that does
  // not exist or refused credentials are reported naming DATABASE_URL.
  await client.connect().catch((error: unknown) => {
    throw databaseOpenFailure(url, error);
  });
  try {
    await client.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
      "id" VARCHAR(36) PRIMARY KEY NOT NULL,
      "checksum" VARCHAR(64) NOT NULL,
      "finished_at" TIMESTAMPTZ,
      "migration_name" VARCHAR(255) NOT NULL,
      "logs" TEXT,
      "rolled_back_at" TIMESTAMPTZ,
      "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
      "applied_steps_count" INTEGER NOT NULL DEFAULT 0
    )`);
    const { rows } = await client.query<AppliedRow>('SELECT * FROM "_prisma_migrations"');
    const { pending, modified } = plan(migrations, rows);
    const applied: string[] = [];
    for (const migration of pending) {
      // PostgreSQL DDL is transactional: a failing migration leaves no trace but its error.
      const startedAt = new Date();
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, $4, 1)`,
          [randomUUID(), migration.checksum, migration.name, startedAt],
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
    return { applied, modified };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}
