import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { conversationSummarySchema } from '../schemas/conversation.js';

export const listConversationsMeta = {
  openapi: {
    method: 'GET',
    path: '/api/conversations',
    tags: ['conversations'],
    summary: "The caller's conversations, newest first, with paging and search",
  },
} satisfies ProcedureMeta;

export const listConversationsInput = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  q: z.string().max(500).optional(),
});

export const listConversationsOutput = z.object({
  conversations: z.array(conversationSummarySchema),
  total: z.number().int(),
});
