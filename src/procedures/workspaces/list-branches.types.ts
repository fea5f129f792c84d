import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { branchSchema } from '../schemas/workspace.js';

export const listBranchesMeta = {
  openapi: {
    method: 'GET',
    path: '/api/workspaces/{workspaceId}/branches',
    tags: ['workspaces'],
    summary: "A workspace's local branches with their last commit",
  },
} satisfies ProcedureMeta;

export const listBranchesInput = z.object({ workspaceId: idParam });

export const listBranchesOutput = z.object({ branches: z.array(branchSchema) });
