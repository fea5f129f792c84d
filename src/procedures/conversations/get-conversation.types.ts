import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { conversationSummarySchema, messageSchema } from '../schemas/conversation.js';

export const getConversationMeta = {
  openapi: { method: 'GET', path: '/api/conversation/{id}', tags: ['conversations'], summary: 'One conversation with its messages' },
} satisfies ProcedureMeta;

export const getConversationInput = z.object({ id: idParam });

export const loadedConversationOutput = z.object({
  conversation: conversationSummarySchema,
  messages: z.array(messageSchema),
  metadata: z.record(z.string(), z.unknown()),
});
