import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { capabilitiesSchema, providerSchema } from './model.schemas.js';

export const getCurrentModelMeta = {
  openapi: {
    method: 'GET',
    path: '/api/model/current',
    tags: ['models'],
    summary: "The caller's active model (their own, else the service default) and its capabilities",
  },
} satisfies ProcedureMeta;

export const getCurrentModelOutput = z.object({ model: z.string(), provider: providerSchema, capabilities: capabilitiesSchema });
