import { switchModel } from '../../core/models/switch-model.js';
import { requirePermission } from '../guards.js';
import { switchModelInput, switchModelMeta, switchModelOutput } from './switch-model.types.js';

export const switchModelProcedure = requirePermission('models:download', { rateGroup: 'models' })
  .meta(switchModelMeta)
  .input(switchModelInput)
  .output(switchModelOutput)
  .mutation(async ({ ctx, input }) => {
    const active = await switchModel(ctx, { userId: ctx.user.id, ip: ctx.ip }, input);
    return { success: true, activeModel: active.name, provider: active.provider };
  });
