import { holdsRole, type Permission, type Role } from '../../src/core/auth/permissions.js';
import type { ApiClient } from './api-client.js';

/**
 * Who is using the page, as the server reports it (`/api/auth/me`, CONTRACT §5): the roles it read
 * from the token (all five in local mode) and the permissions they grant. The page offers a
 * control only when its action would pass the server's guard; the server still decides every
 * request, so this only keeps the page from offering what would be refused.
 */
export class Caller {
  readonly #roles: readonly Role[];
  readonly #permissions: ReadonlySet<Permission>;

  constructor(roles: readonly Role[], permissions: readonly Permission[]) {
    this.#roles = roles;
    this.#permissions = new Set(permissions);
  }

  may(permission: Permission): boolean {
    return this.#permissions.has(permission);
  }

  /** A role guard's answer (the roles above a role pass it too), as the server's own. */
  holdsAnyRole(roles: readonly Role[]): boolean {
    return roles.some((role) => holdsRole(this.#roles, role));
  }
}

/**
 * Until the server has said who the caller is, or when it could not: only what every signed-in
 * role may do is offered, so a failed check hides controls rather than shows ones that 403.
 */
export const unknownCaller = new Caller([], []);

export async function fetchCaller(client: ApiClient): Promise<Caller> {
  const me = await client.system.me.query({});
  return new Caller(me.roles, me.permissions);
}

/** A part of the page with controls that not every role may use. */
export interface CallerAware {
  showFor(caller: Caller): void;
}
