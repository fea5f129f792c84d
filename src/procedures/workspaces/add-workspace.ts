import { addWorkspace } from '../../core/workspaces/add-workspace.js';
import { requirePermission } from '../guards.js';
import { addWorkspaceInput, addWorkspaceMeta, addWorkspaceOutput } from './add-workspace.types.js';

export const addWorkspaceProcedure = requirePermission('workspaces:switch', {
  rateGroup: 'workspace',
  anyRole: ['Dev', 'Lead', 'TheDude'],
})
  .meta(addWorkspaceMeta)
  .input(addWorkspaceInput)
  .output(addWorkspaceOutput)
  .mutation(async ({ ctx, input }) => {
    const actor = { user: ctx.user, ip: ctx.ip };
    const workspace = await addWorkspace(ctx.store, ctx.config, actor, input);
    return { success: true, workspaceId: workspace.id, workspace };
  });
