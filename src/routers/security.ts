import { confirmCommandProcedure } from '../procedures/security/confirm-command.js';
import { getSecurityAuditProcedure } from '../procedures/security/get-security-audit.js';
import { listPendingCommandsProcedure } from '../procedures/security/list-pending-commands.js';
import { router } from '../procedures/trpc.js';

export const securityRouter = router({
  pending: listPendingCommandsProcedure,
  confirm: confirmCommandProcedure,
  audit: getSecurityAuditProcedure,
});
