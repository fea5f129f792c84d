import type { ProcedureMeta } from '../meta.js';

export const getAuditLogMeta = {
  openapi: {
    method: 'GET',
    path: '/api/audit/log',
    tags: ['audit'],
    summary: 'Audit entries, newest first, filtered by type',
  },
} satisfies ProcedureMeta;
