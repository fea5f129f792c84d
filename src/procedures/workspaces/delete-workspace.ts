import { deleteWorkspace } from '../../core/workspaces/delete-workspace.js';
import { releaseRemovedWorkspace } from '../../core/workspaces/workspace-removal.js';
import { requirePermission } from '../guards.js';
import { successMessageOutput } from '../schemas/common.js';
import { deleteWorkspaceInput, deleteWorkspaceMeta } from './delete-workspace.types.js';

export const deleteWorkspaceProcedure = requirePermission('workspaces:switch', {
  rateGroup: 'workspace',
  anyRole: ['Dev', 'Lead', 'TheDude'],
})
  .meta(deleteWorkspaceMeta)
  .input(deleteWorkspaceInput)
  .output(successMessageOutput)
  .mutation(async ({ ctx, input }) => {
    const hasLiveTerminalUnder = (path: string) => ctx.terminals.hasLiveTerminalUnder(path);
    const actor = { user: ctx.user, ip: ctx.ip };
    const removed = await deleteWorkspace(ctx.store, hasLiveTerminalUnder, actor, input.workspaceId);
    await releaseRemovedWorkspace(ctx, actor, removed.path);
    return { success: true, message: 'Workspace removed; its files were not touched' };
  });
