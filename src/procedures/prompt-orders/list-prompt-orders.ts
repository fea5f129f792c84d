import { builtInPromptOrder } from '../../core/prompt-orders/prompt-order-schema.js';
import { listPromptOrders } from '../../core/prompt-orders/prompt-order-store.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { listPromptOrdersMeta, listPromptOrdersOutput } from './list-prompt-orders.types.js';

export const listPromptOrdersProcedure = requirePermission('prompt_orders:list')
  .meta(listPromptOrdersMeta)
  .input(noInput)
  .output(listPromptOrdersOutput)
  .query(async ({ ctx }) => {
    const orders = await listPromptOrders(ctx.store);
    return { orders, default: orders.find((order) => order.isDefault) ?? builtInPromptOrder };
  });
