import { changeDefaultModel, resolveModelChoice } from '../../core/models/switch-model.js';
import { requirePermission } from '../guards.js';
import { setDefaultModelInput, setDefaultModelMeta, setDefaultModelOutput } from './set-default-model.types.js';

// The shared default changes the model of every user who never switched: a Lead decision
// (CONTRACT §5), with no permission beyond the role.
export const setDefaultModelProcedure = requirePermission([], { rateGroup: 'models', anyRole: ['Lead'] })
  .meta(setDefaultModelMeta)
  .input(setDefaultModelInput)
  .output(setDefaultModelOutput)
  .mutation(async ({ ctx, input }) => {
    const chosen = await resolveModelChoice(ctx, input);
    const model = await changeDefaultModel(ctx, { userId: ctx.user.id, ip: ctx.ip }, chosen);
    return { success: true, defaultModel: model.name, provider: model.provider };
  });
