import { refreshWorkspace } from '../../core/workspaces/refresh-workspaces.js';
import { requirePermission } from '../guards.js';
import { refreshWorkspaceInput, refreshWorkspaceMeta, refreshWorkspaceOutput } from './refresh-workspace.types.js';

export const refreshWorkspaceProcedure = requirePermission('workspaces:switch', { rateGroup: 'workspace' })
  .meta(refreshWorkspaceMeta)
  .input(refreshWorkspaceInput)
  .output(refreshWorkspaceOutput)
  .mutation(async ({ ctx, input }) => ({
    success: true,
    workspace: await refreshWorkspace(ctx.store, ctx.config, ctx.user.id, input.workspaceId),
  }));
