import { requirePermission } from '../guards.js';
import { getPoliciesMeta, policiesOutput } from './policies.types.js';

export const getPoliciesProcedure = requirePermission('user:management')
  .meta(getPoliciesMeta)
  .output(policiesOutput)
  .query(({ ctx }) => ctx.policies.read());
