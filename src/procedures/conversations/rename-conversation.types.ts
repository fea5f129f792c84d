import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';
import { titleSchema } from '../schemas/conversation.js';

export const renameConversationMeta = {
  openapi: { method: 'POST', path: '/api/conversation/{id}/rename', tags: ['conversations'], summary: 'Rename a conversation' },
} satisfies ProcedureMeta;

export const renameConversationInput = z.object({ id: idParam, title: titleSchema });
