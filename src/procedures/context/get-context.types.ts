import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { contextSchema } from '../schemas/conversation.js';

export const getContextMeta = {
  openapi: { method: 'GET', path: '/api/context', tags: ['context'], summary: "The caller's current conversation context" },
} satisfies ProcedureMeta;

export const getContextOutput = z.object({
  context: contextSchema,
  conversationId: z.string(),
  messageCount: z.number().int(),
});
