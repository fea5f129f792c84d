import { requireAuthenticated } from '../guards.js';
import { getUsageLimitsMeta, usageLimitsOutput } from './usage.types.js';

export const getUsageLimitsProcedure = requireAuthenticated()
  .meta(getUsageLimitsMeta)
  .output(usageLimitsOutput)
  .query(async ({ ctx }) => ({ limits: await ctx.usage.standing(ctx.user) }));
