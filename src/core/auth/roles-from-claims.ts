import { roles, type Role } from './permissions.js';

/**
 * OIDC_ROLES_CLAIM as claim paths: each comma-separated entry is a dotted path, `<client>` standing
 * for the client id. The client id is put in after splitting, so a client id with dots in it (which
 * Keycloak allows) stays one key. An entry with dots is also tried as one top-level claim name,
 * for providers that require namespaced claims such as `https://example.com/roles` (Auth0).
 */
export function parseRoleClaimPaths(setting: string, clientId: string): string[][] {
  return setting
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .flatMap((entry) => {
      const segments = entry.split('.').map((segment) => (segment === '<client>' ? clientId : segment));
      return segments.length > 1 ? [segments, [entry.replaceAll('<client>', clientId)]] : [segments];
    });
}

/**
 * The union of the role names found at every path (CONTRACT §5), in the contract's order. A path
 * may hold an array of names or one name; anything that is not one of the five roles is ignored.
 */
export function rolesFromClaims(claims: Record<string, unknown>, paths: readonly string[][]): Role[] {
  const found = new Set<string>();
  for (const path of paths) {
    let value: unknown = claims;
    for (const key of path) {
      value = isRecord(value) && Object.hasOwn(value, key) ? value[key] : undefined;
    }
    const names = Array.isArray(value) ? value : [value];
    for (const name of names) if (typeof name === 'string') found.add(name);
  }
  return roles.filter((role) => found.has(role));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
