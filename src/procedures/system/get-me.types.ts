import { z } from 'zod';
import { permissions, roles } from '../../core/auth/permissions.js';
import type { ProcedureMeta } from '../meta.js';

export const getMeMeta = {
  openapi: { method: 'GET', path: '/api/auth/me', tags: ['auth'], summary: 'The caller: user id, roles and permissions' },
} satisfies ProcedureMeta;

export const getMeOutput = z.object({
  userId: z.string(),
  roles: z.array(z.enum(roles)),
  permissions: z.array(z.enum(permissions)),
  authEnabled: z.boolean(),
});
