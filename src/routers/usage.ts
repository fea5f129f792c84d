import { getPoliciesProcedure } from '../procedures/usage/get-policies.js';
import { getUsageLimitsProcedure } from '../procedures/usage/get-usage-limits.js';
import { getUsageProcedure } from '../procedures/usage/get-usage.js';
import { putPoliciesProcedure } from '../procedures/usage/put-policies.js';
import { router } from '../procedures/trpc.js';

export const usageRouter = router({
  report: getUsageProcedure,
  limits: getUsageLimitsProcedure,
  policies: getPoliciesProcedure,
  setPolicies: putPoliciesProcedure,
});
