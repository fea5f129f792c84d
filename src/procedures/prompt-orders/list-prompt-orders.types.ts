import { z } from 'zod';
import type { ProcedureMeta } from '../meta.js';
import { promptOrderSchema } from './prompt-order.schemas.js';

export const listPromptOrdersMeta = {
  openapi: {
    method: 'GET',
    path: '/api/prompt-orders',
    tags: ['prompt-orders'],
    summary: 'Stored prompt orders, and the order in effect by default',
  },
} satisfies ProcedureMeta;

export const listPromptOrdersOutput = z.object({
  orders: z.array(promptOrderSchema),
  /** The stored default order, or the built-in one when none is marked. */
  default: promptOrderSchema,
});
