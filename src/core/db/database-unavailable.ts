// Recognises "the database cannot be reached" among the errors Prisma, its driver adapters and
// the drivers themselves (the chat store's) throw, so callers get 503 SERVICE_UNAVAILABLE
// (CONTRACT §2) rather than a 500.

/** Driver-adapter error kinds that mean the connection, not the query, failed. */
const unavailableKinds = new Set([
  'DatabaseNotReachable',
  'DatabaseDoesNotExist',
  'DatabaseAccessDenied',
  'AuthenticationFailed',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);

/**
 * PostgreSQL SQLSTATEs of a server that is away or refusing: connection exceptions (08…),
 * insufficient resources (53…), operator intervention such as shutdown (57P…), 55000 (a database
 * that does not accept connections), and what Prisma's adapter also counts as unreachable: a
 * database that does not exist (3D000) or refuses the credentials (28000, 28P01).
 */
const unavailableSqlState = /^(08|53|57P)|^(55000|3D000|28000|28P01)$/;

interface AdapterCause {
  kind?: unknown;
  code?: unknown;
  extendedCode?: unknown;
}

/** SQLITE_BUSY's primary code: the extended ones (BUSY_SNAPSHOT, BUSY_RECOVERY …) share its low byte. */
const SQLITE_BUSY = 5;

/** Socket failures of the connection to PostgreSQL. */
const unavailableSocketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);

/**
 * An error of the pg driver itself that means the server cannot be used. Only for errors from a
 * pg call: socket codes alone would also match failures that have nothing to do with a database.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return unavailableSocketCodes.has(code) || unavailableSqlState.test(code);
  // A server that went away mid-connection, a pool that could not connect in time, a TLS refusal: pg gives no code.
  return /^Connection terminated|^timeout exceeded when trying to connect|SSL|TLS/.test(error.message);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // better-sqlite3's own errors (the chat store's connection): a lock held too long, a file that cannot be opened or read.
  if (error.name === 'SqliteError') return /^SQLITE_(BUSY|CANTOPEN|IOERR)/.test(String((error as { code?: unknown }).code));
  if (error.name === 'PrismaClientInitializationError') return true;
  if (error.name === 'PrismaClientKnownRequestError') {
    return /^P10\d\d$/.test(String((error as { code?: unknown }).code));
  }
  if (error.name === 'DriverAdapterError') {
    const cause = (error as { cause?: AdapterCause }).cause;
    if (typeof cause?.kind !== 'string') return false;
    if (unavailableKinds.has(cause.kind)) return true;
    if (cause.kind === 'postgres') return unavailableSqlState.test(String(cause.code));
    // A write lock held past the busy timeout (another process has the SQLite file), or a
    // transaction whose snapshot another connection's commit overtook: try again.
    if (cause.kind === 'sqlite') return typeof cause.extendedCode === 'number' && (cause.extendedCode & 0xff) === SQLITE_BUSY;
  }
  // pg's own words for a connection that broke, which Prisma's adapter passes on unconverted
  // (a transaction's rollback on a connection reset under it, say).
  return /^Client has encountered a connection error and is not queryable|^Client was closed and is not queryable|^Connection terminated/.test(error.message);
}
