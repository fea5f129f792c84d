import { z } from 'zod';
import { auditTypes } from '../../core/audit/record-audit.js';

/** CONTRACT §5: limit 1–1000 (default 100), offset, and a known type; anything else is a 400. */
export const auditQueryInput = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
  type: z.enum(auditTypes).optional(),
});

export const auditEntrySchema = z.object({
  id: z.string(),
  timestamp: z.string(),
  type: z.string(),
  userId: z.string(),
  ip: z.string(),
  details: z.record(z.string(), z.unknown()),
  risk: z.string().nullable(),
});

export const auditPageOutput = z.object({ entries: z.array(auditEntrySchema), total: z.number().int() });
