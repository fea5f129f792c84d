// CONTRACT §13's policy document: quotas per role or user and model access per role. It is
// validated whole, so a stored document is always one the service can apply as it is.
import { z } from 'zod';
import { roles, type Role } from '../auth/permissions.js';

export const quotaWindows = ['minute', 'day', 'month'] as const;
export type QuotaWindow = (typeof quotaWindows)[number];
export const quotaMetrics = ['tokens', 'costUsd', 'requests'] as const;
export type QuotaMetric = (typeof quotaMetrics)[number];

const limit = z.number().nonnegative();

const quotaRule = z
  .strictObject({
    subject: z.union([z.strictObject({ role: z.enum(roles) }), z.strictObject({ userId: z.string().trim().min(1).max(200) })]),
    window: z.enum(quotaWindows),
    tokens: limit.int().optional(),
    costUsd: limit.optional(),
    requests: limit.int().optional(),
  })
  .refine((rule) => rule.tokens !== undefined || rule.costUsd !== undefined || rule.requests !== undefined, {
    message: 'a quota needs tokens, costUsd or requests',
  });

/** `provider/model`, `*` matching any run of characters: `openai/*`, `ollama/llama3.2`, `*`. */
const modelPattern = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^(\*|(openai|anthropic|ollama|\*)\/[^\s]+)$/, 'a pattern is provider/model (openai, anthropic or ollama; * matches anything)');

const modelAccessRule = z.strictObject({
  role: z.enum(roles),
  allow: z.array(modelPattern).max(200),
});

export const policyDocumentSchema = z
  .strictObject({
    // Both required: the document is replaced whole, and an empty body must not wipe every policy.
    quotas: z.array(quotaRule).max(500),
    modelAccess: z.array(modelAccessRule).max(50),
  })
  .superRefine((document, context) => {
    const seen = new Set<Role>();
    document.modelAccess.forEach((rule, index) => {
      if (seen.has(rule.role)) context.addIssue({ code: 'custom', path: ['modelAccess', index, 'role'], message: `${rule.role} has two modelAccess entries` });
      seen.add(rule.role);
    });
  });

export type PolicyDocument = z.output<typeof policyDocumentSchema>;
export type QuotaRule = PolicyDocument['quotas'][number];

export const emptyPolicy: PolicyDocument = { quotas: [], modelAccess: [] };
