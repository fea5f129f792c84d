import { z } from 'zod';
import { quotaMetrics, quotaWindows } from '../../core/usage/policy-document.js';
import { usageGroupings } from '../../core/usage/usage-report.js';
import type { ProcedureMeta } from '../meta.js';

export const getUsageMeta = {
  openapi: {
    method: 'GET',
    path: '/api/usage',
    tags: ['usage'],
    summary: "Token, request and cost totals from the usage ledger; the caller's own, or (audit:view) another user's or every user's",
  },
} satisfies ProcedureMeta;

export const getUsageLimitsMeta = {
  openapi: { method: 'GET', path: '/api/usage/limits', tags: ['usage'], summary: "The caller's quotas: used, remaining and when each resets" },
} satisfies ProcedureMeta;

// Year 0 (and, with an offset, a moment before year 1) is no year PostgreSQL has: refused here,
// as a 400, rather than failing the query.
const instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()])
  .transform((text) => new Date(text))
  .refine((date) => date.getUTCFullYear() >= 1, 'must be in the year 1 or later');

export const usageInput = z.object({
  /** Default: the start of the current UTC month. */
  from: instant.optional(),
  /** Default: now. */
  to: instant.optional(),
  groupBy: z.enum(usageGroupings).default('day'),
  userId: z.string().trim().min(1).max(200).optional(),
});

const usageTotals = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  totalTokens: z.number(),
  requests: z.number(),
  costUsd: z.number().nullable(),
  estimated: z.number(),
});

export const usageOutput = z.object({
  from: z.string(),
  to: z.string(),
  groupBy: z.enum(usageGroupings),
  /** null: every user (groupBy=user without userId). */
  userId: z.string().nullable(),
  rows: z.array(usageTotals.extend({ key: z.string() })),
  totals: usageTotals,
});

export const usageLimitsOutput = z.object({
  limits: z.array(
    z.object({
      window: z.enum(quotaWindows),
      metric: z.enum(quotaMetrics),
      limit: z.number(),
      used: z.number(),
      remaining: z.number(),
      resetAt: z.string(),
    }),
  ),
});
