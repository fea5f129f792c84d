import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { workspaceSchema } from '../schemas/workspace.js';

export const addWorkspaceMeta = {
  openapi: {
    method: 'POST',
    path: '/api/workspaces/add',
    tags: ['workspaces'],
    summary: 'Register an existing directory as a shared workspace (stored by its real path)',
  },
} satisfies ProcedureMeta;

export const addWorkspaceInput = z.object({
  name: z.string().trim().min(1).max(200),
  // Absolute, existing, readable and allowed are the operation's checks (400 WORKSPACE_ERROR).
  path: z.string().min(1).max(4096),
  description: z.string().max(2000).optional(),
});

export const addWorkspaceOutput = z.object({ success: z.boolean(), workspaceId: z.string(), workspace: workspaceSchema });
