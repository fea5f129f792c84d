import { deleteModel } from '../../core/models/delete-model.js';
import { requirePermission } from '../guards.js';
import { successMessageOutput } from '../schemas/common.js';
import { deleteModelInput, deleteModelMeta } from './delete-model.types.js';

export const deleteModelProcedure = requirePermission('models:delete', { rateGroup: 'models' })
  .meta(deleteModelMeta)
  .input(deleteModelInput)
  .output(successMessageOutput)
  .mutation(async ({ ctx, input }) => ({
    success: true,
    message: await deleteModel(ctx, { userId: ctx.user.id, ip: ctx.ip }, input.name),
  }));
