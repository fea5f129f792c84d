import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { modelNameSchema, providerSchema } from './model.schemas.js';

export const downloadModelMeta = {
  openapi: {
    method: 'POST',
    path: '/api/model/download',
    tags: ['models'],
    summary: 'Pull an Ollama model in the background (progress shows in GET /api/models)',
  },
} satisfies ProcedureMeta;

export const downloadModelInput = z.object({ modelName: modelNameSchema, provider: providerSchema.optional() });

export const downloadModelOutput = z.object({ success: z.boolean(), status: z.enum(['available', 'downloading']) });
