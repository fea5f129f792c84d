import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe } from 'vitest';

// Each test gets its own database: a SQLite file in a temporary folder, or a PostgreSQL
// database created for it on the machine's server and dropped afterwards.

export type DatabaseKind = 'sqlite' | 'postgresql';

export const postgresAdminUrl = process.env.TEST_POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

async function probePostgres(): Promise<string | null> {
  const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresProblem = await probePostgres();

/**
 * Whether the PostgreSQL runs happen. CI must run them, so there an unreachable server fails the
 * suite instead of skipping it; elsewhere the skip is announced with its reason.
 */
export const postgresAvailable: boolean = (() => {
  if (postgresProblem === null) return true;
  if (process.env.CI === 'true') {
    throw new Error(`PostgreSQL at ${postgresAdminUrl} is required in CI: ${postgresProblem}`);
  }
  console.warn(`PostgreSQL tests skipped: ${postgresAdminUrl} is not reachable (${postgresProblem})`);
  return false;
})();

/**
 * Declares a suite once per database kind. PostgreSQL suites that cannot run here are declared
 * as skipped, so the runner's summary counts them.
 */
export function describeOnDatabases(name: string, body: (kind: DatabaseKind) => void): void {
  for (const kind of ['sqlite', 'postgresql'] as const) {
    describe.skipIf(kind === 'postgresql' && !postgresAvailable)(`${name} on ${kind}`, () => {
      body(kind);
    });
  }
}

export interface TestDatabase {
  kind: DatabaseKind;
  url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'assistant-test-'));
    return {
      kind,
      url: `file:${join(folder, 'assistant.db')}`,
      drop: () => {
        rmSync(folder, { recursive: true, force: true });
        return Promise.resolve();
      },
    };
  }
  const name = `assistant_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(postgresAdminUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
