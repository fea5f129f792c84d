import { z } from 'zod';

// GET /v1/models: served by the OpenAI-compatible bridge, not a /api REST path (no `openapi` meta).

export const listOpenAIModelsInput = z.object({});

export const listOpenAIModelsOutput = z.object({
  object: z.literal('list'),
  data: z.array(z.object({ id: z.string(), object: z.literal('model'), created: z.number(), owned_by: z.string() })),
});
