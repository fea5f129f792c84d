import { z } from 'zod';
import { policyDocumentSchema } from '../../core/usage/policy-document.js';
import type { ProcedureMeta } from '../meta.js';

export const getPoliciesMeta = {
  openapi: { method: 'GET', path: '/api/policies', tags: ['usage'], summary: 'The quota and model-access policy document (user:management)' },
} satisfies ProcedureMeta;

export const putPoliciesMeta = {
  openapi: {
    method: 'PUT',
    path: '/api/policies',
    tags: ['usage'],
    summary: 'Replace the whole policy document; validated whole, audited, applied on every instance (user:management)',
  },
} satisfies ProcedureMeta;

export const policiesInput = policyDocumentSchema;

export const policiesOutput = z.object({
  policy: policyDocumentSchema,
  /** null while no document was ever stored (no quotas, every model). */
  updatedAt: z.string().nullable(),
});
