import { randomUUID } from 'node:crypto';

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Every id the service makes is a UUID v4 (CONTRACT §2). */
export function newId(): string {
  return randomUUID();
}

/** Whether a client-supplied id could be one of ours; anything else is a 404, not a 400. */
export function isId(value: string): boolean {
  return uuidV4.test(value);
}
