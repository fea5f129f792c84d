import { savePromptOrder } from '../../core/prompt-orders/prompt-order-store.js';
import { requirePermission } from '../guards.js';
import { savePromptOrderInput, savePromptOrderMeta, savePromptOrderOutput } from './save-prompt-order.types.js';

export const savePromptOrderProcedure = requirePermission('prompt_orders:save')
  .meta(savePromptOrderMeta)
  .input(savePromptOrderInput)
  .output(savePromptOrderOutput)
  .mutation(async ({ ctx, input }) => ({ success: true, orderId: await savePromptOrder(ctx.store, input.order) }));
