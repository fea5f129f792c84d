import { requirePermission } from '../guards.js';
import { policiesInput, policiesOutput, putPoliciesMeta } from './policies.types.js';

export const putPoliciesProcedure = requirePermission('user:management')
  .meta(putPoliciesMeta)
  .input(policiesInput)
  .output(policiesOutput)
  .mutation(({ ctx, input }) => ctx.policies.replace({ user: ctx.user, ip: ctx.ip }, input));
