import { holdsPermission } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import { periodStart } from '../../core/usage/quota-periods.js';
import { usageReport } from '../../core/usage/usage-report.js';
import { requireAuthenticated } from '../guards.js';
import { getUsageMeta, usageInput, usageOutput } from './usage.types.js';

// CONTRACT §13: the caller's own totals; another user's (userId=) or every user's (groupBy=user)
// need audit:view, as the audit log does.
export const getUsageProcedure = requireAuthenticated()
  .meta(getUsageMeta)
  .input(usageInput)
  .output(usageOutput)
  .query(async ({ ctx, input }) => {
    const others = (input.userId !== undefined && input.userId !== ctx.user.id) || input.groupBy === 'user';
    if (others && !holdsPermission(ctx.user.roles, 'audit:view')) {
      throw new AppError('FORBIDDEN', "Another user's usage needs the audit:view permission", { details: { required: 'audit:view' } });
    }
    const now = Date.now();
    const from = input.from ?? new Date(periodStart('month', now));
    const to = input.to ?? new Date(now);
    const userId = input.userId ?? (input.groupBy === 'user' ? null : ctx.user.id);
    const report = await usageReport(ctx.store.usageSql, { userId, from, to, groupBy: input.groupBy });
    return { from: from.toISOString(), to: to.toISOString(), groupBy: input.groupBy, userId, ...report };
  });
