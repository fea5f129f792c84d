import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { checkWorkspace, type WorkspaceRecord } from '../workspaces/workspace-integrity.js';

/**
 * Every registered workspace that is still intact (CONTRACT §11: the same directory as
 * registered, still allowed): what a terminal binds writable and what the risk analysis counts as
 * inside. A missing or replaced workspace protects nothing and grants nothing.
 */
export async function intactWorkspaces(store: Store, config: Pick<Config, 'DATABASE_URL'>): Promise<WorkspaceRecord[]> {
  const rows = await store.db.workspace.findMany({ select: { id: true, path: true, device: true, inode: true, gitEntries: true } });
  const checks = await Promise.all(rows.map((row) => checkWorkspace(store, config, row)));
  return rows.filter((_, index) => checks[index]?.ok === true);
}

/** The paths of the intact workspaces (see intactWorkspaces). */
export async function workspaceRoots(store: Store, config: Pick<Config, 'DATABASE_URL'>): Promise<string[]> {
  return (await intactWorkspaces(store, config)).map((workspace) => workspace.path);
}
