import type { Store } from '../db/store.js';
import { findActiveWorkspace, type WorkspaceRef } from './active-workspace.js';
import { directoryPresence } from './git-state.js';
import { listWorkspaceFiles, type EntryType } from './workspace-files.js';
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

/**
 * A workspace for the chat engine's workspace_context: its stored Git state and its top-level
 * entries, sorted by name. Null stays null (no workspace is registered).
 */
export async function describeWorkspace(workspace: WorkspaceRef | null): Promise<WorkspaceDescription | null> {
  if (!workspace) return null;
  const missing = (await directoryPresence(workspace.path)) === 'missing';
  const { id, name, path } = workspace;
  const { status, branch } = shownGitState(workspace, missing);
  const listing = missing
    ? { entries: [], truncated: false }
    : await listWorkspaceFiles(path, '.', { maxEntries: MAX_DESCRIBED_ENTRIES }).catch(() => ({ entries: [], truncated: false }));
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
export async function describeActiveWorkspace(store: Store, userId: string): Promise<WorkspaceDescription | null> {
  return describeWorkspace(await findActiveWorkspace(store, userId));
}
