export type Row = Record<string, unknown>;
/** One statement with `?` placeholders; a Date parameter is stored as Prisma stores DateTime. */
export type Query = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

// The interface only: it is part of the typed client's declarations (through the procedures'
// context), which must not need the drivers' types. The drivers are in usage-sql-drivers.ts.

/**
 * The usage ledger's and quota book's statements on the service's database, on the drivers (the
 * quota check sits before every provider call). The SQL is written once, with `?` placeholders,
 * for both databases.
 */
export interface UsageSql {
  readonly kind: 'sqlite' | 'postgresql';
  query: Query;
  /**
   * Runs `work` in one transaction holding this user's lock, so two reservations for one user,
   * on one instance or several, never both read the same totals.
   */
  locked<T>(userId: string, work: (query: Query) => Promise<T>): Promise<T>;
  /** As locked, holding several users' locks at once (taken in one order, so two never deadlock). */
  lockedMany<T>(userIds: readonly string[], work: (query: Query) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
