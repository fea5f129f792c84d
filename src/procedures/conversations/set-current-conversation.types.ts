import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const setCurrentConversationMeta = {
  openapi: {
    method: 'POST',
    path: '/api/conversation/{id}/set-current',
    tags: ['conversations'],
    summary: "Make a conversation the caller's current one",
  },
} satisfies ProcedureMeta;

export const setCurrentConversationInput = z.object({ id: idParam });

export const setCurrentConversationOutput = z.object({ success: z.boolean(), conversationId: z.string() });
