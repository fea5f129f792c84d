import { expect, it } from 'vitest';
import { isDatabaseUnavailable, isPostgresUnavailable } from '../../src/core/db/database-unavailable.js';

// Which failures are 503 SERVICE_UNAVAILABLE (the database) rather than a 500.

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

it('counts a PostgreSQL server that is away, missing or refusing the credentials as unavailable', () => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', '08006', '53300', '57P01', '55000', '3D000', '28000', '28P01']) {
    expect(isPostgresUnavailable(withCode(code)), code).toBe(true);
  }
  expect(isPostgresUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  expect(isPostgresUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
  // A query's own mistakes are not.
  for (const code of ['23505', '42P01', '22P02']) expect(isPostgresUnavailable(withCode(code)), code).toBe(false);
  expect(isPostgresUnavailable('ECONNREFUSED')).toBe(false);
});

it('does not count a socket failure that no database call raised', () => {
  expect(isDatabaseUnavailable(withCode('ECONNREFUSED'))).toBe(false);
});

it("counts pg's words for a broken connection that Prisma's adapter passes on unconverted", () => {
  expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('Client was closed and is not queryable'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('Unique constraint failed on the fields: (`id`)'))).toBe(false);
});

it('counts every SQLITE_BUSY variant as unavailable, from the driver or through Prisma', () => {
  const sqlite = (code: string) => Object.assign(withCode(code), { name: 'SqliteError' });
  expect(isDatabaseUnavailable(sqlite('SQLITE_BUSY'))).toBe(true);
  expect(isDatabaseUnavailable(sqlite('SQLITE_BUSY_SNAPSHOT'))).toBe(true);
  expect(isDatabaseUnavailable(sqlite('SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
  const adapter = (extendedCode: number) =>
    Object.assign(new Error('driver adapter'), { name: 'DriverAdapterError', cause: { kind: 'sqlite', extendedCode } });
  expect(isDatabaseUnavailable(adapter(5))).toBe(true);
  // SQLITE_BUSY_SNAPSHOT: a Prisma transaction overtaken by another connection's commit.
  expect(isDatabaseUnavailable(adapter(517))).toBe(true);
  expect(isDatabaseUnavailable(adapter(2067))).toBe(false);
});
