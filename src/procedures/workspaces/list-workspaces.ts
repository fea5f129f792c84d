import { listWorkspaces } from '../../core/workspaces/list-workspaces.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { listWorkspacesMeta, listWorkspacesOutput } from './list-workspaces.types.js';

export const listWorkspacesProcedure = requirePermission('workspaces:list', { rateGroup: 'workspace' })
  .meta(listWorkspacesMeta)
  .input(noInput)
  .output(listWorkspacesOutput)
  .query(async ({ ctx }) => ({ workspaces: await listWorkspaces(ctx.store, ctx.user.id) }));
