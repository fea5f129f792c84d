import { listHostedModels } from '../../core/models/list-models.js';
import { permittedModels } from '../../core/models/permitted-models.js';
import { requirePermission } from '../guards.js';
import { apiKeyQuery, modelListOutput } from './model.schemas.js';
import { listOpenAiModelsMeta } from './list-openai-models.types.js';

// Unlike GET /api/models, a provider's own list fails loudly: a rejected key → 400,
// unreachable → 503, 429 → 429 (core/providers/upstream-error.ts).
export const listOpenAiModelsProcedure = requirePermission('models:list')
  .meta(listOpenAiModelsMeta)
  .input(apiKeyQuery)
  .output(modelListOutput)
  .query(async ({ ctx, input }) => ({ models: permittedModels(await listHostedModels(ctx, 'openai', input.apiKey), ctx.policies.accessFor(ctx.user)) }));
