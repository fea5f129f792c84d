import { getAuditLogProcedure } from '../procedures/audit/get-audit-log.js';
import { router } from '../procedures/trpc.js';

export const auditRouter = router({
  log: getAuditLogProcedure,
});
