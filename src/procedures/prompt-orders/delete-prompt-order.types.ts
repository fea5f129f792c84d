import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { idParam } from '../schemas/common.js';

export const deletePromptOrderMeta = {
  openapi: { method: 'DELETE', path: '/api/prompt-orders/{orderId}', tags: ['prompt-orders'], summary: 'Delete a prompt order' },
} satisfies ProcedureMeta;

export const deletePromptOrderInput = z.object({ orderId: idParam });
