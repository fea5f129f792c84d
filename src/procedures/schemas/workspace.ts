import { z } from 'zod';
import { branchNameProblem } from '../../core/workspaces/branch-name.js';
import { workspaceStatuses } from '../../core/workspaces/workspace-view.js';

const count = z.number().int();

/** CONTRACT §3's workspace object; changes, ahead and behind once a refresh has stored them. */
export const workspaceSchema = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string(),
  branch: z.string(),
  status: z.enum(workspaceStatuses),
  description: z.string(),
  active: z.boolean(),
  changes: z.object({ modified: count, added: count, deleted: count, untracked: count }).optional(),
  ahead: count.optional(),
  behind: count.optional(),
});

export const branchSchema = z.object({
  name: z.string(),
  current: z.boolean(),
  lastCommit: z.object({ hash: z.string(), message: z.string(), author: z.string(), date: z.string() }).nullable(),
});

/**
 * A local branch name, checked against Git's ref-name rules before any Git call. A bad name is a
 * malformed parameter, so it is a 400 INVALID_REQUEST with `details.issues`; a well-formed name
 * that is no local branch is a 400 WORKSPACE_ERROR from the operation itself.
 */
export const branchNameSchema = z.string().superRefine((name, ctx) => {
  const problem = branchNameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: `Branch name ${problem}` });
});
