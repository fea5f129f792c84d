import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { modelNameSchema, providerSchema } from './model.schemas.js';

export const setDefaultModelMeta = {
  openapi: {
    method: 'POST',
    path: '/api/model/default',
    tags: ['models'],
    summary: 'Set the service default model, used by every user who never switched (role Lead)',
  },
} satisfies ProcedureMeta;

export const setDefaultModelInput = z.object({ modelName: modelNameSchema, provider: providerSchema.optional() });

export const setDefaultModelOutput = z.object({ success: z.boolean(), defaultModel: z.string(), provider: providerSchema });
