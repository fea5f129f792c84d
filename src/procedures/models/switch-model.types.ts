import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { modelNameSchema, providerSchema } from './model.schemas.js';

export const switchModelMeta = {
  openapi: {
    method: 'POST',
    path: '/api/model/switch',
    tags: ['models'],
    summary: "Set the caller's own active model (provider inferred when the name is unique)",
  },
} satisfies ProcedureMeta;

export const switchModelInput = z.object({ modelName: modelNameSchema, provider: providerSchema.optional() });

export const switchModelOutput = z.object({ success: z.boolean(), activeModel: z.string(), provider: providerSchema });
