import { z } from 'zod';

/** A GET or body-less operation: no fields, unknown ones ignored. */
export const noInput = z.object({});

export const successOutput = z.object({ success: z.boolean() });

export const successMessageOutput = z.object({ success: z.boolean(), message: z.string() });

/**
 * A path or query id. Any string is accepted here, of any length (the body and URL limits bound
 * it): an unknown or malformed id is a 404 from the operation, never a 400 (CONTRACT §2).
 */
export const idParam = z.string();

/**
 * What a caller's provider API key may hold. It goes on to the provider in an HTTP header, which
 * takes printable ASCII only: anything else made the outgoing fetch throw, which read as the
 * provider being down (503 MODEL_UNAVAILABLE) when it is the caller's mistake (400).
 */
export const headerSafeText = /^[\x20-\x7e]*$/;
export const headerSafeMessage = 'must be printable ASCII (it is sent on as an HTTP header)';

/** A boolean query flag: `?all=true` from REST (a string), a real boolean from typed clients. */
export const queryFlag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((value) => value === true || value === 'true' || value === '1');
