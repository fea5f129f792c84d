import { deletePromptOrderProcedure } from '../procedures/prompt-orders/delete-prompt-order.js';
import { listPromptOrdersProcedure } from '../procedures/prompt-orders/list-prompt-orders.js';
import { savePromptOrderProcedure } from '../procedures/prompt-orders/save-prompt-order.js';
import { router } from '../procedures/trpc.js';

export const promptOrdersRouter = router({
  list: listPromptOrdersProcedure,
  save: savePromptOrderProcedure,
  delete: deletePromptOrderProcedure,
});
