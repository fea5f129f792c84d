import { requireModelAccess } from '../../core/models/require-model-access.js';
import { changeDefaultModel, resolveModelChoice } from '../../core/models/switch-model.js';
import { requirePermission } from '../guards.js';
import { setDefaultModelInput, setDefaultModelMeta, setDefaultModelOutput } from './set-default-model.types.js';

// The shared default changes the model of every user who never switched: a Lead decision
// (CONTRACT §5), with no permission beyond the role. A Lead may only make a default of a model
// their own roles may use (§13): choosing it is choosing it.
export const setDefaultModelProcedure = requirePermission([], { rateGroup: 'models', anyRole: ['Lead'] })
  .meta(setDefaultModelMeta)
  .input(setDefaultModelInput)
  .output(setDefaultModelOutput)
  .mutation(async ({ ctx, input }) => {
    const actor = { userId: ctx.user.id, ip: ctx.ip };
    const access = ctx.policies.accessFor(ctx.user);
    const chosen = await resolveModelChoice(ctx, input, access);
    await requireModelAccess(ctx.store, actor, access, { provider: chosen.provider, model: chosen.name });
    const model = await changeDefaultModel(ctx, actor, chosen);
    return { success: true, defaultModel: model.name, provider: model.provider };
  });
