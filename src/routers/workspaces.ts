import { addWorkspaceProcedure } from '../procedures/workspaces/add-workspace.js';
import { deleteWorkspaceProcedure } from '../procedures/workspaces/delete-workspace.js';
import { listBranchesProcedure } from '../procedures/workspaces/list-branches.js';
import { listWorkspacesProcedure } from '../procedures/workspaces/list-workspaces.js';
import { refreshAllWorkspacesProcedure } from '../procedures/workspaces/refresh-all-workspaces.js';
import { refreshWorkspaceProcedure } from '../procedures/workspaces/refresh-workspace.js';
import { switchBranchProcedure } from '../procedures/workspaces/switch-branch.js';
import { switchWorkspaceProcedure } from '../procedures/workspaces/switch-workspace.js';
import { router } from '../procedures/trpc.js';

export const workspacesRouter = router({
  list: listWorkspacesProcedure,
  switch: switchWorkspaceProcedure,
  add: addWorkspaceProcedure,
  delete: deleteWorkspaceProcedure,
  refresh: refreshWorkspaceProcedure,
  refreshAll: refreshAllWorkspacesProcedure,
  branches: listBranchesProcedure,
  switchBranch: switchBranchProcedure,
});
