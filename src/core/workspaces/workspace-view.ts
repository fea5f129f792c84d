import type { Prisma, Workspace } from '../../generated/sqlite/client.js';

/** CONTRACT §3's workspace statuses. */
export const workspaceStatuses = ['clean', 'dirty', 'not_git', 'missing', 'error'] as const;
export type WorkspaceStatus = (typeof workspaceStatuses)[number];

export interface WorkspaceChanges {
  modified: number;
  added: number;
  deleted: number;
  untracked: number;
}

/** What a refresh computes and stores. */
export interface GitState {
  status: WorkspaceStatus;
  /** "" when not a Git repository or missing; "HEAD" when detached (see git-state.ts). */
  branch: string;
  changes: WorkspaceChanges;
  ahead: number;
  behind: number;
}

/** CONTRACT §3's workspace object; the Git counters appear once a refresh has stored them. */
export interface WorkspaceView {
  id: string;
  name: string;
  path: string;
  branch: string;
  status: WorkspaceStatus;
  description: string;
  active: boolean;
  changes?: WorkspaceChanges;
  ahead?: number;
  behind?: number;
}

export const noChanges: WorkspaceChanges = { modified: 0, added: 0, deleted: 0, untracked: 0 };

export function isWorkspaceStatus(value: string): value is WorkspaceStatus {
  return (workspaceStatuses as readonly string[]).includes(value);
}

function storedChanges(value: Prisma.JsonValue | null): WorkspaceChanges | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const count = (key: keyof WorkspaceChanges) => (typeof value[key] === 'number' ? value[key] : 0);
  return { modified: count('modified'), added: count('added'), deleted: count('deleted'), untracked: count('untracked') };
}

/** The stored status and branch as shown: `branch` is "" when not a Git repository or missing (CONTRACT §3). */
export function shownGitState(stored: { status: string; branch: string }, observedMissing: boolean): { status: WorkspaceStatus; branch: string } {
  const status = observedMissing ? 'missing' : isWorkspaceStatus(stored.status) ? stored.status : 'error';
  return { status, branch: status === 'missing' || status === 'not_git' ? '' : stored.branch };
}

/**
 * A stored workspace as the API shows it. `observedMissing` is the list's cheap stat: a path that
 * vanished since the last refresh is reported `missing` without running Git.
 */
export function toWorkspaceView(workspace: Workspace, activeId: string | null, observedMissing = false): WorkspaceView {
  const changes = storedChanges(workspace.changes);
  const { status, branch } = shownGitState(workspace, observedMissing);
  return {
    id: workspace.id,
    name: workspace.name,
    path: workspace.path,
    branch,
    status,
    description: workspace.description,
    active: workspace.id === activeId,
    ...(changes ? { changes, ahead: workspace.ahead, behind: workspace.behind } : {}),
  };
}

/** The columns a refresh writes. */
export function gitStateColumns(state: GitState, now: Date = new Date()) {
  return {
    status: state.status,
    branch: state.branch,
    changes: { ...state.changes } satisfies Prisma.InputJsonObject,
    ahead: state.ahead,
    behind: state.behind,
    refreshedAt: now,
  };
}
