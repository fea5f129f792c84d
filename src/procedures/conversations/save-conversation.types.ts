import { z } from 'zod';
import { messageRoles } from '../../core/conversations/conversation-views.js';
import type { ProcedureMeta } from '../meta.js';
import { titleSchema } from '../schemas/conversation.js';

export const saveConversationMeta = {
  openapi: {
    method: 'POST',
    path: '/api/conversation/save',
    tags: ['conversations'],
    summary: 'Title the current conversation, or import one from conversationData',
  },
} satisfies ProcedureMeta;

export const saveConversationInput = z.object({
  title: titleSchema.optional(),
  conversationData: z
    .object({
      messages: z.array(z.object({ role: z.enum(messageRoles), content: z.string() })).max(100_000),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export const saveConversationOutput = z.object({ success: z.boolean(), conversationId: z.string() });
