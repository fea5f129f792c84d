import { z } from 'zod';
import { sectionTypes } from '../../core/prompt-orders/prompt-order-schema.js';

export const promptOrderSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  sections: z.array(z.object({ type: z.enum(sectionTypes), content: z.string().optional(), enabled: z.boolean() })),
  isDefault: z.boolean(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
