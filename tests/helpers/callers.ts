import { permissionsOf, type Role, type User } from '../../src/core/auth/permissions.js';
import { tokenRejected } from '../../src/core/auth/verify-access-token.js';
import { createContextInner, type AppDeps } from '../../src/procedures/context.js';
import { appErrorFrom } from '../../src/procedures/error-mapping.js';
import { createCallerFactory } from '../../src/procedures/trpc.js';
import { appRouter } from '../../src/routers/app-router.js';

// Typed callers of the router as given users, for the rules that depend on who asks (ownership,
// roles) without going through tokens; tests of the tokens themselves use a real OpenID provider.

export function userWith(id: string, roles: Role[]): User {
  return { id, roles, permissions: new Set(permissionsOf(roles)) };
}

/** The router as `user` (null: no credential), calling from `ip`. */
export function callerFor(deps: AppDeps, user: User | null, ip = '203.0.113.9') {
  const identify = () => (user ? Promise.resolve(user) : Promise.reject(tokenRejected('missing')));
  return createCallerFactory(appRouter)(createContextInner(deps, { requestId: 'test', ip, identify }));
}

/** The contract error code a call fails with, or null when it succeeds. */
export async function errorCodeOf(call: Promise<unknown>): Promise<string | null> {
  const error: unknown = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  return error === null ? null : appErrorFrom(error).code;
}
