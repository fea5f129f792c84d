import { listAudit } from '../../core/audit/list-audit.js';
import { requirePermission } from '../guards.js';
import { auditPageOutput, auditQueryInput } from '../schemas/audit.js';
import { getSecurityAuditMeta } from './get-security-audit.types.js';

// CONTRACT §5: only the guard differs from GET /api/audit/log.
export const getSecurityAuditProcedure = requirePermission('audit:view', { anyRole: ['Admin'] })
  .meta(getSecurityAuditMeta)
  .input(auditQueryInput)
  .output(auditPageOutput)
  .query(({ ctx, input }) => listAudit(ctx.store, input));
