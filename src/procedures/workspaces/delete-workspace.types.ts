import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const deleteWorkspaceMeta = {
  openapi: {
    method: 'DELETE',
    path: '/api/workspaces/{workspaceId}',
    tags: ['workspaces'],
    summary: 'Unregister a workspace (its files stay on disk)',
  },
} satisfies ProcedureMeta;

export const deleteWorkspaceInput = z.object({ workspaceId: idParam });
