import { getCurrentModel } from '../../core/models/current-model.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { getCurrentModelMeta, getCurrentModelOutput } from './get-current-model.types.js';

export const getCurrentModelProcedure = requirePermission('models:list')
  .meta(getCurrentModelMeta)
  .input(noInput)
  .output(getCurrentModelOutput)
  .query(({ ctx }) => getCurrentModel(ctx.store, ctx.config, ctx.user.id));
