import { switchBranch } from '../../core/workspaces/switch-branch.js';
import { requirePermission } from '../guards.js';
import { switchBranchInput, switchBranchMeta, switchBranchOutput } from './switch-branch.types.js';

export const switchBranchProcedure = requirePermission('workspaces:switch', { rateGroup: 'workspace' })
  .meta(switchBranchMeta)
  .input(switchBranchInput)
  .output(switchBranchOutput)
  .mutation(async ({ ctx, input }) => {
    const actor = { user: ctx.user, ip: ctx.ip };
    return { success: true, currentBranch: await switchBranch(ctx.store, ctx.config, actor, input.workspaceId, input.branchName) };
  });
