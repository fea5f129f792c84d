import { deletePromptOrder } from '../../core/prompt-orders/prompt-order-store.js';
import { requirePermission } from '../guards.js';
import { successOutput } from '../schemas/common.js';
import { deletePromptOrderInput, deletePromptOrderMeta } from './delete-prompt-order.types.js';

export const deletePromptOrderProcedure = requirePermission('prompt_orders:save')
  .meta(deletePromptOrderMeta)
  .input(deletePromptOrderInput)
  .output(successOutput)
  .mutation(async ({ ctx, input }) => {
    await deletePromptOrder(ctx.store, input.orderId);
    return { success: true };
  });
