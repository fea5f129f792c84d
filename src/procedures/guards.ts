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
// They are the steps of one middleware per procedure (its gate), not one middleware each: tRPC
// copies a call's options twice at every middleware, the largest single cost of a small request
// (BENCHMARKS.md, "REST and storage").

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

function requireFeature(config: Config, feature: Feature): void {
  const { enabled, variable, refusal } = features[feature];
  if (!enabled(config)) throw new AppError('SECURITY_VIOLATION', refusal, { details: { feature: variable } });
}

/** A public procedure's gate: the rate limit, then the unstorable input. */
const publicGate = middleware(async function publicGate({ ctx, meta, getRawInput, next }) {
  await countRequest(ctx, meta);
  await rejectUnstorableInput(getRawInput);
  return next();
});

/**
 * A caller's procedure gate, in the contract's order: the rate limit, the caller, its
 * permissions, the feature flag, the unstorable input. The procedure gets the caller as
 * `ctx.user`; a subscription outlives its request and ends when the token expires, as sockets do.
 */
function callerGate(guard: Guard, feature?: Feature) {
  return middleware(async function callerGate({ ctx, meta, type, getRawInput, next }) {
    await countRequest(ctx, meta);
    const user = await ctx.identify();
    const missing = missingForGuard(user, guard);
    if (missing) await deny(ctx, user, missing);
    if (feature) requireFeature(ctx.config, feature);
    await rejectUnstorableInput(getRawInput);
    // The caller goes onto this request's own context rather than through `next({ ctx })`, which
    // copies the whole context (every dependency, key by key) for the rest of the chain. The
    // context is made per request (per /trpc request for a batch, whose calls all share its
    // memoised caller), so no other caller can see it; the type argument gives the procedure
    // `ctx.user` as the copy would.
    Object.assign(ctx, { user });
    const result = await next<{ user: User }>({});
    if (type !== 'subscription' || !result.ok || user.tokenExpiresAt === undefined || !isAsyncIterable(result.data)) return result;
    return { ...result, data: untilTokenExpiry(result.data, user.tokenExpiresAt) };
  });
}

const publicGuard: Guard = { kind: 'public' };
const authenticatedGuard: Guard = { kind: 'authenticated' };

/** No credential needed: health and documentation. */
export const publicProcedure = rootProcedure.meta({ guard: publicGuard, rateGroup: 'none' }).use(publicGate);

/** Any valid caller. */
export function requireAuthenticated(rateGroup: RateGroup = 'general') {
  return rootProcedure.meta({ guard: authenticatedGuard, rateGroup }).use(callerGate(authenticatedGuard));
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
  return rootProcedure.meta({ guard, rateGroup: options.rateGroup ?? 'general', ...(feature ? { feature } : {}) }).use(callerGate(guard, feature));
}
