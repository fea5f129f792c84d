import { createHash } from 'node:crypto';
import { AppError } from '../errors/app-error.js';

/** The request header a client names its attempt with (CONTRACT §12). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** 1–255 visible ASCII characters: no spaces, no control characters, nothing outside ASCII. */
const visibleAscii = /^[\x21-\x7e]{1,255}$/;

/** The header's value, or a 400 naming it. */
export function checkIdempotencyKey(value: string): string {
  if (!visibleAscii.test(value)) {
    throw AppError.invalid(`${IDEMPOTENCY_HEADER} must be 1-255 visible ASCII characters`, { field: IDEMPOTENCY_HEADER });
  }
  return value;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Where one caller's key is kept. Keys are per caller, so another user's same key is another
 * entry; both parts are hashed, so a key of any characters is a fixed-size Redis name.
 */
export function keyScope(userId: string, key: string): string {
  return sha256(`${userId}\u0000${key}`);
}

/**
 * What "the same request" means for a repeated key: the same operation (procedure) with the same
 * validated input. The input holds the caller's provider key when one is sent, so it is hashed,
 * never stored.
 */
export function requestFingerprint(operation: string, input: unknown): string {
  return sha256(`${operation}\u0000${JSON.stringify(input)}`);
}
