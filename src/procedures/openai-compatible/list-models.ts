import { listModels } from '../../core/models/list-models.js';
import { permittedModels } from '../../core/models/permitted-models.js';
import { openAIModelList } from '../../core/openai-compatible/model-objects.js';
import { requirePermission } from '../guards.js';
import { listOpenAIModelsInput, listOpenAIModelsOutput } from './list-models.types.js';

/** GET /v1/models: GET /api/models in OpenAI's list format, under the same guard and model access (CONTRACT §13). */
export const listOpenAIModelsProcedure = requirePermission('models:list')
  .input(listOpenAIModelsInput)
  .output(listOpenAIModelsOutput)
  .query(async ({ ctx }) => openAIModelList(permittedModels(await listModels(ctx), ctx.policies.accessFor(ctx.user)), ctx.startedAt));
