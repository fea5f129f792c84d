import { AppError } from '../errors/app-error.js';

// The `before` cursor of GET /api/conversations: a place in the list's order (lastModified
// newest first, then id), so the next page is sought in the index instead of skipped to. It is
// opaque to clients: base64url of [lastModified, id], the last conversation of a page.

export interface ListPosition {
  lastModified: Date;
  id: string;
}

/** Conversation ids are UUIDs: printable ASCII, never long (and never a NUL, which PostgreSQL refuses). */
const ID = /^[\x20-\x7e]{1,200}$/;

export function encodeListCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.lastModified.toISOString(), position.id])).toString('base64url');
}

export function decodeListCursor(cursor: string): ListPosition {
  const invalid = () => new AppError('INVALID_REQUEST', 'before is not a cursor from a conversation list', { details: { field: 'before' } });
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !ID.test(id)) throw invalid();
  const lastModified = new Date(at);
  if (Number.isNaN(lastModified.getTime()) || lastModified.toISOString() !== at) throw invalid();
  return { lastModified, id };
}
