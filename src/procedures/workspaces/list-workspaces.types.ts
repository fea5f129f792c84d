import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { workspaceSchema } from '../schemas/workspace.js';

export const listWorkspacesMeta = {
  openapi: {
    method: 'GET',
    path: '/api/workspaces',
    tags: ['workspaces'],
    summary: "Every registered workspace with its last known Git state; `active` marks the caller's",
  },
} satisfies ProcedureMeta;

export const listWorkspacesOutput = z.object({ workspaces: z.array(workspaceSchema) });
