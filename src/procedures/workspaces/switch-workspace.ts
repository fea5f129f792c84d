import { switchWorkspace } from '../../core/workspaces/switch-workspace.js';
import { requirePermission } from '../guards.js';
import { switchWorkspaceInput, switchWorkspaceMeta, switchWorkspaceOutput } from './switch-workspace.types.js';

export const switchWorkspaceProcedure = requirePermission('workspaces:switch', { rateGroup: 'workspace' })
  .meta(switchWorkspaceMeta)
  .input(switchWorkspaceInput)
  .output(switchWorkspaceOutput)
  .mutation(async ({ ctx, input }) => ({
    success: true,
    activeWorkspace: await switchWorkspace(ctx.store, { user: ctx.user, ip: ctx.ip }, input.workspaceId),
  }));
