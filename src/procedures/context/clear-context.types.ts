import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';

export const clearContextMeta = {
  openapi: {
    method: 'POST',
    path: '/api/context/clear',
    tags: ['context'],
    summary: 'Start a new empty current conversation; the old one stays saved',
  },
} satisfies ProcedureMeta;

export const clearContextOutput = z.object({ success: z.boolean(), message: z.string(), conversationId: z.string() });
