// Recognises "the database cannot be reached" among the errors Prisma and its driver adapters
// throw, so callers get 503 SERVICE_UNAVAILABLE (CONTRACT §2) rather than a 500.

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
 * insufficient resources (53…), operator intervention such as shutdown (57P…), and 55000, which a
 * database that does not accept connections answers.
 */
const unavailableSqlState = /^(08|53|57P)|^55000$/;

interface AdapterCause {
  kind?: unknown;
  code?: unknown;
  extendedCode?: unknown;
}

const SQLITE_BUSY = 5;

/** Socket failures of a database connection (the chat store talks to the drivers directly). */
const unavailableSocketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);

/** Errors of the pg and better-sqlite3 drivers themselves, as the chat store meets them. */
function isDriverUnavailable(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (unavailableSocketCodes.has(code)) return true;
    if (error.name === 'SqliteError') return /^SQLITE_(BUSY|CANTOPEN|IOERR)/.test(code);
    if (/^[0-9A-Z]{5}$/.test(code)) return unavailableSqlState.test(code);
  }
  // pg reports a server that went away mid-connection, or a pool that could not connect in time, without a code.
  return /^Connection terminated|^timeout exceeded when trying to connect/.test(error.message);
}

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isDriverUnavailable(error)) return true;
  if (error.name === 'PrismaClientInitializationError') return true;
  if (error.name === 'PrismaClientKnownRequestError') {
    return /^P10\d\d$/.test(String((error as { code?: unknown }).code));
  }
  if (error.name === 'DriverAdapterError') {
    const cause = (error as { cause?: AdapterCause }).cause;
    if (typeof cause?.kind !== 'string') return false;
    if (unavailableKinds.has(cause.kind)) return true;
    if (cause.kind === 'postgres') return unavailableSqlState.test(String(cause.code));
    // A write lock held past the busy timeout: another process has the SQLite file.
    if (cause.kind === 'sqlite') return cause.extendedCode === SQLITE_BUSY;
  }
  return false;
}
