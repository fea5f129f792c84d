import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const loadConversationMeta = {
  openapi: {
    method: 'POST',
    path: '/api/conversations/load',
    tags: ['conversations'],
    summary: 'Load a conversation and make it current',
  },
} satisfies ProcedureMeta;

export const loadConversationInput = z.object({ conversationId: idParam });
