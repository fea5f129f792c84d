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

/** A boolean query flag: `?all=true` from REST (a string), a real boolean from typed clients. */
export const queryFlag = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((value) => value === true || value === 'true' || value === '1');
