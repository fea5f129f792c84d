import { realpathSync } from 'node:fs';
import type { Store } from '../db/store.js';

/**
 * The real paths of every registered workspace that still exists. Paths are stored resolved, but
 * a folder may have been replaced by a symlink since, so they are resolved again.
 */
export async function workspaceRoots(store: Store): Promise<string[]> {
  const rows = await store.db.workspace.findMany({ select: { path: true } });
  const roots: string[] = [];
  for (const { path } of rows) {
    try {
      roots.push(realpathSync(path));
    } catch {
      // A missing workspace protects nothing and grants nothing.
    }
  }
  return roots;
}
