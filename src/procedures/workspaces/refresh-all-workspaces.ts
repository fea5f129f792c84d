import { refreshAllWorkspaces } from '../../core/workspaces/refresh-workspaces.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { refreshAllWorkspacesMeta, refreshAllWorkspacesOutput } from './refresh-all-workspaces.types.js';

export const refreshAllWorkspacesProcedure = requirePermission('workspaces:switch', { rateGroup: 'workspace' })
  .meta(refreshAllWorkspacesMeta)
  .input(noInput)
  .output(refreshAllWorkspacesOutput)
  .mutation(async ({ ctx }) => ({ success: true, workspaces: await refreshAllWorkspaces(ctx.store, ctx.config, ctx.user.id) }));
