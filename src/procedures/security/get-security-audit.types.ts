import type { ProcedureMeta } from '../meta.js';

export const getSecurityAuditMeta = {
  openapi: {
    method: 'GET',
    path: '/api/security/audit',
    tags: ['security'],
    summary: 'The audit log for administrators: the same query and entries as /api/audit/log',
  },
} satisfies ProcedureMeta;
