import type { Workspace } from '../../generated/sqlite/client.js';
import type { Store } from '../db/store.js';
import { AppError } from '../errors/app-error.js';
import { isId } from '../ids.js';

/** A registered workspace by id; a malformed id answers the same 404 as an unknown one (CONTRACT §2). */
export async function requireWorkspace(store: Store, id: string): Promise<Workspace> {
  const workspace = isId(id) ? await store.db.workspace.findUnique({ where: { id } }) : null;
  if (!workspace) throw AppError.notFound('Workspace');
  return workspace;
}
