import type { Permission, Role, User } from '../core/auth/permissions.js';
import { holdsRole } from '../core/auth/permissions.js';
import { recordAudit } from '../core/audit/record-audit.js';
import { AppError } from '../core/errors/app-error.js';
import type { Guard, RateGroup } from './meta.js';
import { rejectUnstorableInput } from './input-hygiene.js';
import { middleware, rootProcedure } from './trpc.js';

// Guards run in the contract's order (CONTRACT §2): authentication (401), then permission (403
// FORBIDDEN); feature flags, input validation and existence come later in each procedure. The
// unstorable-input check is the first step of input validation, so it follows the guards.

const authenticated = middleware(async function requireCaller({ ctx, next }) {
  if (!ctx.user) {
    throw ctx.authFailure ?? new AppError('UNAUTHORIZED', 'Authentication required', { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
  return next({ ctx: { user: ctx.user } });
});

/** The first thing a guard finds missing, or null when the user passes it. */
export function missingForGuard(user: User, guard: Guard): string | null {
  if (guard.kind !== 'permission') return null;
  const permission = guard.permissions.find((name) => !user.permissions.has(name));
  if (permission) return permission;
  if (guard.anyRole && !guard.anyRole.some((role) => holdsRole(user.roles, role))) {
    return `role ${guard.anyRole.join('|')}`;
  }
  return null;
}

const authorizedFor = (guard: Guard) =>
  middleware(async function checkPermissions({ ctx, next }) {
    const user = ctx.user;
    if (!user) throw new AppError('UNAUTHORIZED', 'Authentication required');
    const missing = missingForGuard(user, guard);
    if (missing) {
      await recordAudit(ctx.store, {
        type: 'access',
        userId: user.id,
        ip: ctx.ip,
        details: { action: 'denied', missing },
      });
      throw new AppError('FORBIDDEN', `Missing permission: ${missing}`, { details: { missing } });
    }
    return next();
  });

/** No credential needed: health and documentation. */
export const publicProcedure = rootProcedure
  .meta({ guard: { kind: 'public' }, rateGroup: 'none' })
  .use(rejectUnstorableInput);

/** Any valid caller. */
export function requireAuthenticated(rateGroup: RateGroup = 'general') {
  return rootProcedure.meta({ guard: { kind: 'authenticated' }, rateGroup }).use(authenticated).use(rejectUnstorableInput);
}

/** All the given permissions, and optionally one of the given roles (or a role above it). */
export function requirePermission(
  permissions: Permission | readonly Permission[],
  options: { rateGroup?: RateGroup; anyRole?: readonly Role[] } = {},
) {
  const guard: Guard = {
    kind: 'permission',
    permissions: typeof permissions === 'string' ? [permissions] : permissions,
    ...(options.anyRole ? { anyRole: options.anyRole } : {}),
  };
  return rootProcedure
    .meta({ guard, rateGroup: options.rateGroup ?? 'general' })
    .use(authenticated)
    .use(authorizedFor(guard))
    .use(rejectUnstorableInput);
}
