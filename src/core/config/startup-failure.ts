import { isDatabaseUnavailable, isPostgresUnavailable } from '../db/database-unavailable.js';
import { sqliteFilePath } from '../db/create-db.js';

// The mistakes a person makes when setting the service up (a port in use, a database that is not
// there) stop the start with one line naming the variable to change, as a bad value does
// (CONTRACT §1), not with a stack trace to read. Anything else is a fault and keeps its stack.

/** A start-up failure caused by a setting's value; its message is the whole report. */
export class SettingError extends Error {
  override name = 'SettingError';
  constructor(
    readonly variable: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Where a database URL points, without its credentials (DATABASE_URL is never echoed whole). */
export function describeDatabase(url: string): string {
  if (url.startsWith('file:')) return `the SQLite file ${sqliteFilePath(url)}`;
  try {
    const parsed = new URL(url);
    const host = parsed.hostname === '' ? 'the local socket' : `${parsed.hostname}:${parsed.port || '5432'}`;
    return `PostgreSQL at ${host}`;
  } catch {
    return 'PostgreSQL';
  }
}

function postgresDatabaseName(url: string): string {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres';
  } catch {
    return '';
  }
}

/** The system error code, also of Node's AggregateError when every address of a host refused. */
function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0] ?? '';
}

/** The line for a database that cannot be opened or reached, naming DATABASE_URL. */
export function databaseOpenFailure(url: string, error: unknown): SettingError {
  const where = describeDatabase(url);
  const code = errorCode(error);
  let message: string;
  if (url.startsWith('file:')) {
    message = `${where} cannot be opened (${errorText(error)}); check that its folder exists or can be made and is writable, or correct DATABASE_URL`;
  } else if (code === '3D000') {
    const name = postgresDatabaseName(url);
    message = `the database "${name}" does not exist on ${where}; create it (createdb ${name}) or correct the name in DATABASE_URL`;
  } else if (code === '28P01' || code === '28000') {
    message = `${where} refused the sign-in (${errorText(error)}); correct the user or password in DATABASE_URL`;
  } else if (code !== undefined && /^(ECONNREFUSED|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|ECONNRESET)$/.test(code)) {
    message = `${where} cannot be reached (${code}); start PostgreSQL there or correct DATABASE_URL`;
  } else {
    message = `${where} cannot be used (${errorText(error)}); check DATABASE_URL`;
  }
  return new SettingError('DATABASE_URL', `Cannot start: ${message}`, { cause: error });
}

interface ListenSettings {
  PORT: number;
  HOST: string;
  DATABASE_URL: string;
}

/**
 * The one line for a start-up failure caused by a setting, or undefined for a fault (which is
 * logged with its stack).
 */
export function startupFailureLine(error: unknown, config: ListenSettings): string | undefined {
  if (error instanceof SettingError) return error.message;
  const code = errorCode(error);
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  const at = `${config.HOST}:${config.PORT}`;
  // A worker of WORKERS > 1 has the primary bind the port for it, and its error names `bind`.
  if (syscall === 'listen' || syscall === 'bind') {
    if (code === 'EADDRINUSE') {
      return `Cannot start: PORT ${config.PORT} is already in use on ${config.HOST} (another program, or this service running already); stop it or set PORT to a free port`;
    }
    if (code === 'EACCES') return `Cannot start: PORT ${config.PORT} on ${config.HOST} needs privileges this process lacks; set PORT to 1024 or above (a reverse proxy can serve port 80/443)`;
    if (code === 'EADDRNOTAVAIL') return `Cannot start: HOST ${config.HOST} is not an address of this machine (listening on ${at}); set HOST to one of its addresses, or 0.0.0.0 for all`;
  }
  if (code === 'ENOTFOUND' && (error as { hostname?: unknown }).hostname === config.HOST) {
    return `Cannot start: HOST ${config.HOST} is not a name this machine can resolve; set HOST to an address such as 127.0.0.1`;
  }
  // Past the migration (which reports its own failures as SettingError): a database that went
  // away while the service prepared its stored state.
  if (isDatabaseUnavailable(error) || (!config.DATABASE_URL.startsWith('file:') && isPostgresUnavailable(error))) {
    return databaseOpenFailure(config.DATABASE_URL, error).message;
  }
  return undefined;
}
