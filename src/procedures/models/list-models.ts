import { listModels } from '../../core/models/list-models.js';
import { permittedModels } from '../../core/models/permitted-models.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { modelListOutput } from './model.schemas.js';
import { listModelsMeta } from './list-models.types.js';

// Only the models the caller's roles may use (CONTRACT §13); the per-provider lists filter alike.
export const listModelsProcedure = requirePermission('models:list')
  .meta(listModelsMeta)
  .input(noInput)
  .output(modelListOutput)
  .query(async ({ ctx }) => ({ models: permittedModels(await listModels(ctx, ctx.user.id), ctx.policies.accessFor(ctx.user)) }));
