import { z } from 'zod';
import { promptOrderInputSchema } from '../../core/prompt-orders/prompt-order-schema.js';
import type { ProcedureMeta } from '../meta.js';

export const savePromptOrderMeta = {
  openapi: {
    method: 'POST',
    path: '/api/prompt-orders',
    tags: ['prompt-orders'],
    summary: 'Create a prompt order, or update the one named by order.id',
  },
} satisfies ProcedureMeta;

export const savePromptOrderInput = z.object({ order: promptOrderInputSchema });

export const savePromptOrderOutput = z.object({ success: z.boolean(), orderId: z.string() });
