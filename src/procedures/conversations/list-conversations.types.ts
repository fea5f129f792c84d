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
  // Capped where a 64-bit OFFSET still holds it; beyond the caller's conversations it costs one count.
  offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0),
  before: z
    .string()
    .max(400)
    .optional()
    .describe("A previous page's nextBefore: the page starts after that conversation, as fast at any depth (offset then counts from there)"),
  q: z
    .string()
    .max(500)
    // PostgreSQL cannot hold U+0000 in text, so no stored title or message contains one.
    .refine((text) => !text.includes('\u0000'), 'q must not contain U+0000')
    .optional()
    .describe('A substring of the title or of any message, ignoring case (Unicode case folding); %, _ and \\ are literal'),
});

export const listConversationsOutput = z.object({
  conversations: z.array(conversationSummarySchema),
  total: z.number().int(),
  nextBefore: z.string().optional().describe('Pass as before for the next page; absent on the last page'),
});
