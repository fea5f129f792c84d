import { listModels } from '../../core/models/list-models.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { modelListOutput } from './model.schemas.js';
import { listModelsMeta } from './list-models.types.js';

export const listModelsProcedure = requirePermission('models:list')
  .meta(listModelsMeta)
  .input(noInput)
  .output(modelListOutput)
  .query(async ({ ctx }) => ({ models: await listModels(ctx, ctx.user.id) }));
