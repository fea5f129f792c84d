import { listOllamaModels } from '../../core/models/list-models.js';
import { permittedModels } from '../../core/models/permitted-models.js';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { modelListOutput } from './model.schemas.js';
import { listOllamaModelsMeta } from './list-ollama-models.types.js';

/** Installed models and downloads in progress; an unreachable Ollama → 503 MODEL_UNAVAILABLE. */
export const listOllamaModelsProcedure = requirePermission('models:list')
  .meta(listOllamaModelsMeta)
  .input(noInput)
  .output(modelListOutput)
  .query(async ({ ctx }) => ({ models: permittedModels(await listOllamaModels(ctx), ctx.policies.accessFor(ctx.user)) }));
