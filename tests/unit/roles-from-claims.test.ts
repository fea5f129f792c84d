import { describe, expect, it } from 'vitest';
import { parseRoleClaimPaths, rolesFromClaims } from '../../src/core/auth/roles-from-claims.js';

const defaults = 'realm_access.roles,resource_access.<client>.roles,roles';

describe('roles from token claims (OIDC_ROLES_CLAIM)', () => {
  it('reads Keycloak realm roles, the client roles of this client only, and a top-level roles claim', () => {
    const paths = parseRoleClaimPaths(defaults, 'assistant');
    const claims = {
      realm_access: { roles: ['User', 'offline_access'] },
      resource_access: { assistant: { roles: ['Dev'] }, other: { roles: ['TheDude'] } },
      roles: 'Admin',
    };
    expect(rolesFromClaims(claims, paths)).toEqual(['User', 'Admin', 'Dev']);
  });

  it('keeps a client id with dots as one key', () => {
    const paths = parseRoleClaimPaths(defaults, 'com.example.assistant');
    expect(rolesFromClaims({ resource_access: { 'com.example.assistant': { roles: ['Lead'] } } }, paths)).toEqual(['Lead']);
    expect(rolesFromClaims({ resource_access: { com: { example: { assistant: { roles: ['Lead'] } } } } }, paths)).toEqual([]);
  });

  it('takes a namespaced claim name with dots as a whole (Auth0-style custom claims)', () => {
    const paths = parseRoleClaimPaths('https://assistant.example.com/roles', 'assistant');
    expect(rolesFromClaims({ 'https://assistant.example.com/roles': ['TheDude'] }, paths)).toEqual(['TheDude']);
  });

  it('ignores unknown names, other cases, non-strings, missing paths and inherited properties', () => {
    const paths = parseRoleClaimPaths('groups, realm_access.roles ,,toString', 'assistant');
    const claims = { groups: ['admin', 'USER', 7, null, { name: 'Dev' }, 'Lead'], realm_access: 'not an object' };
    expect(rolesFromClaims(claims, paths)).toEqual(['Lead']);
    expect(rolesFromClaims({}, paths)).toEqual([]);
  });
});
