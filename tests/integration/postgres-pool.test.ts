import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresPool } from '../../src/core/db/postgres-pool.js';
import { postgresAdminUrl, postgresAvailable } from '../helpers/databases.js';
import { waitFor } from '../helpers/wait-for.js';

// A checked-out connection whose server side dies must come back to the pool by itself:
// @prisma/adapter-pg gives a transaction's client back only on commit or rollback, and a reset in
// between used to keep it checked out until a restart (tests/reliability/dependency-faults).

describe.skipIf(!postgresAvailable)('the PostgreSQL pool', () => {
  it('drops a checked-out connection once the server ends it, and its late release is harmless', async () => {
    const pool = createPostgresPool(pg.Pool, { connectionString: postgresAdminUrl, max: 2 });
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      // The way a transaction holds it: checked out, never released while the statement fails.
      const held = await pool.connect();
      const pid = (await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      expect(pool.totalCount).toBe(1);
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await expect(held.query('SELECT 1')).rejects.toThrow();

      await waitFor(() => (pool.totalCount === 0 ? true : undefined), 5000, 'the dead connection to leave the pool');
      // What the adapter does later, on its rollback: nothing happens, nothing throws.
      expect(() => {
        held.release();
      }).not.toThrow();
      expect(pool.totalCount).toBe(0);

      // The pool still serves, with its full size.
      const [first, second] = await Promise.all([pool.connect(), pool.connect()]);
      expect((await first.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one).toBe(1);
      first.release();
      second.release();
      // And it ends at once, with nothing left checked out.
      const started = performance.now();
      await pool.end();
      expect(performance.now() - started).toBeLessThan(1000);
    } finally {
      await admin.end();
    }
  });
});
