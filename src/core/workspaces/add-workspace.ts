import { lstat } from 'node:fs/promises';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { isPathInside } from '../paths/path-inside.js';
import { newId } from '../ids.js';
import { findActiveWorkspaceId } from './active-workspace.js';
import { readGitState } from './git-state.js';
import type { Actor } from '../auth/actor.js';
import { auditWorkspace } from './workspace-audit.js';
import { identityColumns, presentGitEntries } from './workspace-integrity.js';
import { resolveWorkspacePath } from './workspace-path.js';
import { gitStateColumns, toWorkspaceView, type WorkspaceView } from './workspace-view.js';

export interface NewWorkspace {
  name: string;
  path: string;
  description?: string | undefined;
}

const duplicate = (path: string) => new AppError('WORKSPACE_ERROR', `A workspace is already registered at ${path}`);

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2002';
}

/**
 * Registers a directory as a shared workspace, stored by its real path, its identity (device and
 * inode, checked at every later use) and which of `.git`'s redirecting entries it has now, with a
 * first Git refresh.
 * It does not become the caller's active workspace; the first one registered is everyone's
 * default until they switch (CONTRACT §5).
 */
export async function addWorkspace(
  store: Store,
  config: Pick<Config, 'DATABASE_URL' | 'WORKSPACE_ALLOWED_ROOTS'>,
  actor: Actor,
  input: NewWorkspace,
): Promise<WorkspaceView> {
  const path = await resolveWorkspacePath(input.path, config);
  if (await store.db.workspace.findUnique({ where: { path } })) throw duplicate(path);
  // One workspace inside another would be writable from terminals that do not pin it (CONTRACT
  // §11): a command there could swap its folder for a link before a tool or a terminal binds it.
  const registered = await store.db.workspace.findMany({ select: { path: true } });
  const around = registered.find((other) => isPathInside(path, other.path) || isPathInside(other.path, path));
  if (around) {
    const relation = isPathInside(path, around.path) ? 'lies inside' : 'holds';
    throw new AppError('WORKSPACE_ERROR', `${path} ${relation} the workspace at ${around.path}: workspaces may not nest`);
  }
  const id = newId();
  const record = { id, path, ...identityColumns(await lstat(path)), gitEntries: await presentGitEntries(path) };
  const state = await readGitState(store, config, record);
  const workspace = await store.db.workspace
    .create({ data: { ...record, name: input.name, description: input.description ?? '', ...gitStateColumns(state) } })
    .catch((error: unknown) => {
      // Two concurrent adds of one directory: the unique path column decides, the loser is told why.
      throw isUniqueViolation(error) ? duplicate(path) : error;
    });
  await auditWorkspace(store, actor, 'added', { workspaceId: id, name: workspace.name, path });
  return toWorkspaceView(workspace, await findActiveWorkspaceId(store, actor.user.id));
}
