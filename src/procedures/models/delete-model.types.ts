import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';

export const deleteModelMeta = {
  openapi: {
    method: 'DELETE',
    path: '/api/models/{name}',
    tags: ['models'],
    summary: 'Delete an installed Ollama model (name URL-encoded, `:` allowed)',
  },
} satisfies ProcedureMeta;

export const deleteModelInput = z.object({ name: z.string().min(1).max(500) });
