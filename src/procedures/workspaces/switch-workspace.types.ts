import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { workspaceSchema } from '../schemas/workspace.js';

export const switchWorkspaceMeta = {
  openapi: {
    method: 'POST',
    path: '/api/workspaces/switch',
    tags: ['workspaces'],
    summary: "Make a workspace the caller's active one (other users keep theirs)",
  },
} satisfies ProcedureMeta;

export const switchWorkspaceInput = z.object({ workspaceId: idParam });

export const switchWorkspaceOutput = z.object({ success: z.boolean(), activeWorkspace: workspaceSchema });
