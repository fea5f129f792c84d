import { describe, expect, it } from 'vitest';
import { holdsRole, permissions, permissionsOf, roles, type Permission, type Role } from '../../src/core/auth/permissions.js';

// CONTRACT §5's matrix, row by row.
const matrix: [Permission[], Role[]][] = [
  [
    ['chat:send', 'chat:clear', 'conversations:list', 'conversations:save', 'conversations:load', 'conversations:delete', 'models:list',
      'providers:openai', 'providers:anthropic', 'providers:ollama', 'prompt_orders:list', 'workspaces:list'],
    ['User', 'Admin', 'Dev', 'Lead', 'TheDude'],
  ],
  [['audit:view', 'system:info'], ['Admin', 'Lead', 'TheDude']],
  [['prompt_orders:save'], ['Admin', 'Dev', 'Lead', 'TheDude']],
  [['models:download', 'models:delete', 'workspaces:switch', 'terminal:create', 'terminal:execute', 'terminal:kill'], ['Dev', 'Lead', 'TheDude']],
  [['user:management'], ['TheDude']],
];

describe('role → permission matrix', () => {
  it('covers every permission exactly once', () => {
    expect(matrix.flatMap(([names]) => names).sort()).toEqual([...permissions].sort());
  });

  it.each(roles)('%s holds exactly its permissions', (role) => {
    const expected = matrix.filter(([, holders]) => holders.includes(role)).flatMap(([names]) => names);
    expect(permissionsOf([role]).sort()).toEqual(expected.sort());
  });

  it('several roles hold the union', () => {
    expect(permissionsOf(['Admin', 'Dev']).sort()).toEqual(permissions.filter((p) => p !== 'user:management').sort());
  });
});

describe('role guards: TheDude ⊇ Lead ⊇ {Dev, Admin} ⊇ User', () => {
  const passes: Record<Role, Role[]> = {
    User: ['User', 'Admin', 'Dev', 'Lead', 'TheDude'],
    Admin: ['Admin', 'Lead', 'TheDude'],
    Dev: ['Dev', 'Lead', 'TheDude'],
    Lead: ['Lead', 'TheDude'],
    TheDude: ['TheDude'],
  };
  it.each(roles)('a guard for %s passes for it and the roles above it only', (required) => {
    for (const held of roles) expect(holdsRole([held], required), `${held} for ${required}`).toBe(passes[required].includes(held));
  });
});
