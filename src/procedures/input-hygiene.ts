import { AppError } from '../core/errors/app-error.js';
import { middleware } from './trpc.js';

type Path = (string | number)[];

/** The path of the first string (or object key) holding a NUL character, or null. */
export function findNulCharacter(value: unknown, path: Path = []): Path | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findNulCharacter(item, [...path, index]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return [...path, key];
      const found = findNulCharacter(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/**
 * PostgreSQL's text and jsonb cannot hold U+0000 and would fail the write with a 500, while SQLite
 * would store it: refusing it up front gives one 400 on both, as part of input validation.
 */
export const rejectNulCharacters = middleware(async function rejectNul({ getRawInput, next }) {
  const path = findNulCharacter(await getRawInput());
  if (path) {
    throw AppError.invalid('Invalid request', { issues: [{ path, message: 'must not contain NUL characters' }] });
  }
  return next();
});
