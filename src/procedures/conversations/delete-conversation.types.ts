import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const deleteConversationMeta = {
  openapi: { method: 'DELETE', path: '/api/conversation/{id}', tags: ['conversations'], summary: 'Delete a conversation and its messages' },
} satisfies ProcedureMeta;

export const deleteConversationInput = z.object({ id: idParam });
