import { listModels } from '../../core/models/list-models.js';
import { openAIModelList } from '../../core/openai-compatible/model-objects.js';
import { requirePermission } from '../guards.js';
import { listOpenAIModelsInput, listOpenAIModelsOutput } from './list-models.types.js';

/** GET /v1/models: GET /api/models in OpenAI's list format, under the same guard. */
export const listOpenAIModelsProcedure = requirePermission('models:list')
  .input(listOpenAIModelsInput)
  .output(listOpenAIModelsOutput)
  .query(async ({ ctx }) => openAIModelList(await listModels(ctx), ctx.startedAt));
