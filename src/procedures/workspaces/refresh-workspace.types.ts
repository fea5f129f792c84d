import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { workspaceSchema } from '../schemas/workspace.js';

export const refreshWorkspaceMeta = {
  openapi: {
    method: 'POST',
    path: '/api/workspaces/{workspaceId}/refresh',
    tags: ['workspaces'],
    summary: "Recompute and store a workspace's branch, status, changes and ahead/behind",
  },
} satisfies ProcedureMeta;

export const refreshWorkspaceInput = z.object({ workspaceId: idParam });

export const refreshWorkspaceOutput = z.object({ success: z.boolean(), workspace: workspaceSchema });
