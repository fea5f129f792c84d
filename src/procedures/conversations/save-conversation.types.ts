import { z } from 'zod';
import { IMPORT_MESSAGES_CEILING } from '../../core/config/env-schema.js';
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
      // The ceiling MAX_IMPORT_MESSAGES may be raised to; the configured limit (10,000 unless
      // set) is checked next, before anything is stored (save-conversation.ts).
      messages: z
        .array(z.object({ role: z.enum(messageRoles), content: z.string() }))
        .max(IMPORT_MESSAGES_CEILING)
        .describe(`At most MAX_IMPORT_MESSAGES messages (default 10000, at most ${IMPORT_MESSAGES_CEILING}); more is 400 INVALID_REQUEST`),
      metadata: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export const saveConversationOutput = z.object({ success: z.boolean(), conversationId: z.string() });
