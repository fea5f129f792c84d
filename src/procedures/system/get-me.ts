import { permissions } from '../../core/auth/permissions.js';
import { requireAuthenticated } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { getMeMeta, getMeOutput } from './get-me.types.js';

export const getMeProcedure = requireAuthenticated()
  .meta(getMeMeta)
  .input(noInput)
  .output(getMeOutput)
  .query(({ ctx }) => ({
    userId: ctx.user.id,
    roles: ctx.user.roles,
    permissions: permissions.filter((permission) => ctx.user.permissions.has(permission)),
    authEnabled: ctx.config.AUTH_ENABLED,
  }));
