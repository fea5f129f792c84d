import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { branchNameSchema } from '../schemas/workspace.js';

export const switchBranchMeta = {
  openapi: {
    method: 'POST',
    path: '/api/workspaces/{workspaceId}/switch-branch',
    tags: ['workspaces'],
    summary: 'Check out an existing local branch (never creates one)',
  },
} satisfies ProcedureMeta;

export const switchBranchInput = z.object({ workspaceId: idParam, branchName: branchNameSchema });

export const switchBranchOutput = z.object({ success: z.boolean(), currentBranch: z.string() });
