import { requireModelAccess } from '../../core/models/require-model-access.js';
import { resolveModelChoice, switchModel } from '../../core/models/switch-model.js';
import { requirePermission, requirePermissionFor } from '../guards.js';
import { switchModelInput, switchModelMeta, switchModelOutput } from './switch-model.types.js';

// The caller's own model (CONTRACT §12): anyone who may chat may choose what they chat with, as
// long as they may use its provider and their roles may use the model (§13); it no longer
// changes anyone else's, so models:download is not asked.
export const switchModelProcedure = requirePermission('chat:send', { rateGroup: 'models' })
  .meta(switchModelMeta)
  .input(switchModelInput)
  .output(switchModelOutput)
  .mutation(async ({ ctx, input }) => {
    const actor = { userId: ctx.user.id, ip: ctx.ip };
    const access = ctx.policies.accessFor(ctx.user);
    const chosen = await resolveModelChoice(ctx, input, access);
    await requirePermissionFor(ctx, `providers:${chosen.provider}`);
    await requireModelAccess(ctx.store, actor, access, { provider: chosen.provider, model: chosen.name });
    const active = await switchModel(ctx, actor, chosen);
    return { success: true, activeModel: active.name, provider: active.provider };
  });
