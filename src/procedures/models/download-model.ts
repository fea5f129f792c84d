import { downloadModel } from '../../core/models/download-model.js';
import { requirePermission } from '../guards.js';
import { downloadModelInput, downloadModelMeta, downloadModelOutput } from './download-model.types.js';

export const downloadModelProcedure = requirePermission('models:download', { rateGroup: 'models' })
  .meta(downloadModelMeta)
  .input(downloadModelInput)
  .output(downloadModelOutput)
  .mutation(async ({ ctx, input }) => ({
    success: true,
    status: await downloadModel(ctx, { userId: ctx.user.id, ip: ctx.ip }, input, ctx.policies.accessFor(ctx.user)),
  }));
