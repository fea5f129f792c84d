import { listAudit } from '../../core/audit/list-audit.js';
import { requirePermission } from '../guards.js';
import { auditPageOutput, auditQueryInput } from '../schemas/audit.js';
import { getAuditLogMeta } from './get-audit-log.types.js';

export const getAuditLogProcedure = requirePermission('audit:view')
  .meta(getAuditLogMeta)
  .input(auditQueryInput)
  .output(auditPageOutput)
  .query(({ ctx, input }) => listAudit(ctx.store, input));
