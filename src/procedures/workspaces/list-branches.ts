import { listBranches } from '../../core/workspaces/list-branches.js';
import { requirePermission } from '../guards.js';
import { listBranchesInput, listBranchesMeta, listBranchesOutput } from './list-branches.types.js';

export const listBranchesProcedure = requirePermission('workspaces:list', { rateGroup: 'workspace' })
  .meta(listBranchesMeta)
  .input(listBranchesInput)
  .output(listBranchesOutput)
  .query(async ({ ctx, input }) => ({ branches: await listBranches(ctx.store, ctx.config, input.workspaceId) }));
