import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { findActiveWorkspace, toWorkspaceRef, type WorkspaceRef } from './active-workspace.js';
import { checkWorkspace } from './workspace-integrity.js';
import type { EntryType, WorkspaceFiles } from './workspace-files.js';
import { shownGitState, type WorkspaceStatus } from './workspace-view.js';

/** Top-level entries shown to the model; a prompt has no room for more. */
export const MAX_DESCRIBED_ENTRIES = 200;

export interface WorkspaceDescription {
  id: string;
  name: string;
  path: string;
  branch: string;
  status: WorkspaceStatus;
  entries: { name: string; type: EntryType }[];
  /** More top-level entries exist than `entries` holds. */
  truncated: boolean;
}

export interface DescribeDeps {
  store: Store;
  config: Pick<Config, 'DATABASE_URL'>;
  files: WorkspaceFiles;
}

/**
 * A workspace for the chat engine's workspace_context: its stored Git state and its top-level
 * entries, sorted by name, listed by the workspace's confined file helper. A workspace that is
 * missing or no longer the registered directory (CONTRACT §11) is described as such, unlisted.
 * Null stays null (no workspace is registered).
 */
export async function describeWorkspace(deps: DescribeDeps, workspace: WorkspaceRef | null): Promise<WorkspaceDescription | null> {
  if (!workspace) return null;
  const check = await checkWorkspace(deps.store, deps.config, workspace);
  const { id, name, path } = workspace;
  const { status, branch } = check.ok ? shownGitState(workspace, false) : { status: check.status, branch: '' };
  const listing = check.ok
    ? await deps.files.list(workspace, '.', { maxEntries: MAX_DESCRIBED_ENTRIES }).catch(() => ({ entries: [], truncated: false }))
    : { entries: [], truncated: false };
  return {
    id,
    name,
    path,
    branch,
    status,
    entries: listing.entries.map((entry) => ({ name: entry.name, type: entry.type })),
    truncated: listing.truncated,
  };
}

/** The caller's active workspace described (see describeWorkspace). */
export async function describeActiveWorkspace(deps: DescribeDeps, userId: string): Promise<WorkspaceDescription | null> {
  const active = await findActiveWorkspace(deps.store, userId);
  return describeWorkspace(deps, active === null ? null : toWorkspaceRef(active));
}
