// Roles and permissions exactly as CONTRACT §5's matrix.

export const roles = ['User', 'Admin', 'Dev', 'Lead', 'TheDude'] as const;
export type Role = (typeof roles)[number];

export const permissions = [
  'chat:send',
  'chat:clear',
  'conversations:list',
  'conversations:save',
  'conversations:load',
  'conversations:delete',
  'models:list',
  'models:download',
  'models:delete',
  'providers:openai',
  'providers:anthropic',
  'providers:ollama',
  'workspaces:list',
  'workspaces:switch',
  'terminal:create',
  'terminal:execute',
  'terminal:kill',
  'prompt_orders:list',
  'prompt_orders:save',
  'audit:view',
  'system:info',
  'user:management',
] as const;
export type Permission = (typeof permissions)[number];

const basic: Permission[] = [
  'chat:send',
  'chat:clear',
  'conversations:list',
  'conversations:save',
  'conversations:load',
  'conversations:delete',
  'models:list',
  'providers:openai',
  'providers:anthropic',
  'providers:ollama',
  'prompt_orders:list',
  'workspaces:list',
];
const development: Permission[] = [
  'models:download',
  'models:delete',
  'workspaces:switch',
  'terminal:create',
  'terminal:execute',
  'terminal:kill',
];
const administration: Permission[] = ['audit:view', 'system:info'];

export const rolePermissions: Record<Role, ReadonlySet<Permission>> = {
  User: new Set(basic),
  Admin: new Set([...basic, ...administration, 'prompt_orders:save']),
  Dev: new Set([...basic, ...development, 'prompt_orders:save']),
  Lead: new Set(permissions.filter((permission) => permission !== 'user:management')),
  TheDude: new Set(permissions),
};

/** The roles that satisfy a guard for `role`: it and every role above it (TheDude ⊇ Lead ⊇ {Dev, Admin} ⊇ User). */
const rolesSatisfying: Record<Role, readonly Role[]> = {
  User: roles,
  Admin: ['Admin', 'Lead', 'TheDude'],
  Dev: ['Dev', 'Lead', 'TheDude'],
  Lead: ['Lead', 'TheDude'],
  TheDude: ['TheDude'],
};

export function holdsRole(held: readonly Role[], required: Role): boolean {
  return held.some((role) => rolesSatisfying[required].includes(role));
}

export function permissionsOf(held: readonly Role[]): Permission[] {
  const granted = new Set<Permission>();
  for (const role of held) for (const permission of rolePermissions[role]) granted.add(permission);
  return permissions.filter((permission) => granted.has(permission));
}

export function holdsPermission(held: readonly Role[], permission: Permission): boolean {
  return held.some((role) => rolePermissions[role].has(permission));
}

export interface User {
  id: string;
  roles: Role[];
  permissions: ReadonlySet<Permission>;
  /** When the access token this user was read from expires (epoch ms); absent without tokens. */
  tokenExpiresAt?: number;
}

/** With AUTH_ENABLED=false every caller is `local`, holding all five roles (CONTRACT §5). */
export const localUser: User = {
  id: 'local',
  roles: [...roles],
  permissions: new Set(permissions),
};
