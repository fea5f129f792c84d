import type { Permission, Role, User } from '../core/auth/permissions.js';
import { holdsRole } from '../core/auth/permissions.js';
import { recordAudit } from '../core/audit/record-audit.js';
import { AppError } from '../core/errors/app-error.js';
import type { Config } from '../core/config/load-config.js';
import type { Context } from './context.js';
import type { Feature, Guard, RateGroup } from './meta.js';
import { rejectUnstorableInput } from './input-hygiene.js';
import { countRequest } from './rate-limit.js';
import { isAsyncIterable, untilTokenExpiry } from './subscription-expiry.js';
import { middleware, rootProcedure } from './trpc.js';

// Guards run in the contract's order (CONTRACT §2): rate limit (429), authentication (401), permission (403
// FORBIDDEN), feature flag (403 SECURITY_VIOLATION); input validation and existence come later in
// each procedure. The unstorable-input check is the first step of input validation, so it follows.

const authenticated = middleware(async function requireCaller({ ctx, type, next }) {
  const user = await ctx.identify();
  const result = await next({ ctx: { user } });
  // A subscription outlives its request: it ends when the token expires, as sockets do.
  if (type !== 'subscription' || !result.ok || user.tokenExpiresAt === undefined || !isAsyncIterable(result.data)) return result;
  return { ...result, data: untilTokenExpiry(result.data, user.tokenExpiresAt) };
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

/** A 403 FORBIDDEN, audited as an `access` denial naming what was missing (CONTRACT §5). */
async function deny(ctx: Context, user: User, missing: string): Promise<never> {
  await recordAudit(ctx.store, { type: 'access', userId: user.id, ip: ctx.ip, details: { action: 'denied', missing } });
  throw new AppError('FORBIDDEN', `Missing permission: ${missing}`, { details: { missing } });
}

const authorizedFor = (guard: Guard) =>
  middleware(async function checkPermissions({ ctx, next }) {
    // `identify` is memoised per request: this is the caller `authenticated` resolved.
    const user = await ctx.identify();
    const missing = missingForGuard(user, guard);
    if (missing) await deny(ctx, user, missing);
    return next();
  });

/**
 * For the few operations whose guard depends on the input (`pending?all=true` needs Lead):
 * the same 403 and audit entry as a declared guard.
 */
export async function requireRoleFor(ctx: Context & { user: User }, roles: readonly Role[]): Promise<void> {
  if (!roles.some((role) => holdsRole(ctx.user.roles, role))) await deny(ctx, ctx.user, `role ${roles.join('|')}`);
}

/** For permissions that depend on the input (a chat's provider, `mode:"agent"`): the same 403 and audit entry. */
export async function requirePermissionFor(ctx: Context & { user: User }, permission: Permission): Promise<void> {
  if (!ctx.user.permissions.has(permission)) await deny(ctx, ctx.user, permission);
}

/** Each feature flag (CONTRACT §1): whether it is on, and what to tell a caller when it is off. */
const features: Record<Feature, { enabled: (config: Config) => boolean; variable: string; refusal: string }> = {
  systemCommands: {
    enabled: (config) => config.ENABLE_SYSTEM_COMMANDS,
    variable: 'ENABLE_SYSTEM_COMMANDS',
    refusal: 'System commands are disabled on this server; set ENABLE_SYSTEM_COMMANDS=true to enable terminals and command confirmation',
  },
};

const featureEnabled = (feature: Feature) =>
  middleware(async function requireFeature({ ctx, next }) {
    const { enabled, variable, refusal } = features[feature];
    if (!enabled(ctx.config)) throw new AppError('SECURITY_VIOLATION', refusal, { details: { feature: variable } });
    return next();
  });

/** No credential needed: health and documentation. */
export const publicProcedure = rootProcedure
  .meta({ guard: { kind: 'public' }, rateGroup: 'none' })
  .use(countRequest)
  .use(rejectUnstorableInput);

/** Any valid caller. */
export function requireAuthenticated(rateGroup: RateGroup = 'general') {
  return rootProcedure.meta({ guard: { kind: 'authenticated' }, rateGroup }).use(countRequest).use(authenticated).use(rejectUnstorableInput);
}

/** All the given permissions, and optionally one of the given roles (or a role above it). */
export function requirePermission(
  permissions: Permission | readonly Permission[],
  options: { rateGroup?: RateGroup; anyRole?: readonly Role[]; feature?: Feature } = {},
) {
  const guard: Guard = {
    kind: 'permission',
    permissions: typeof permissions === 'string' ? [permissions] : permissions,
    ...(options.anyRole ? { anyRole: options.anyRole } : {}),
  };
  const { feature } = options;
  const guarded = rootProcedure
    .meta({ guard, rateGroup: options.rateGroup ?? 'general', ...(feature ? { feature } : {}) })
    .use(countRequest)
    .use(authenticated)
    .use(authorizedFor(guard));
  return (feature ? guarded.use(featureEnabled(feature)) : guarded).use(rejectUnstorableInput);
}
