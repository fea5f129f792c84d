import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { workspaceSchema } from '../schemas/workspace.js';

export const refreshAllWorkspacesMeta = {
  openapi: {
    method: 'POST',
    path: '/api/workspaces/refresh-all',
    tags: ['workspaces'],
    summary: 'Refresh every workspace; a broken one reports status "error" instead of failing the call',
  },
} satisfies ProcedureMeta;

export const refreshAllWorkspacesOutput = z.object({ success: z.boolean(), workspaces: z.array(workspaceSchema) });
