import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import { inWorkspaceGit, runGit } from './confined-git.js';
import { requireWorkspace } from './find-workspace.js';
import { requireRepository } from './git-state.js';

export interface BranchEntry {
  name: string;
  current: boolean;
  lastCommit: { hash: string; message: string; author: string; date: string } | null;
}

// One for-each-ref call lists every local branch with its tip. Fields end in NUL (%00), which no
// ref name, hash, subject or author can contain; Git puts a newline after each record, which
// therefore starts the next record's first field and is stripped there.
const FIELDS = ['%(refname)', '%(objectname)', '%(subject)', '%(authorname)', '%(authordate:iso-strict)'];
const FORMAT = `--format=${FIELDS.map((field) => `${field}%00`).join('')}`;
const HEADS = 'refs/heads/';

/** Git's ISO 8601 with the author's offset, as the contract's UTC ISO string. */
function utcDate(text: string): string {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : date.toISOString();
}

function parseBranchRefs(output: string, currentRef: string): BranchEntry[] {
  const fields = output.split('\0');
  const branches: BranchEntry[] = [];
  for (let index = 0; index + FIELDS.length <= fields.length; index += FIELDS.length) {
    const [ref = '', hash = '', message = '', author = '', date = ''] = fields.slice(index, index + FIELDS.length);
    const refName = ref.replace(/^\n/, '');
    if (!refName.startsWith(HEADS)) continue;
    branches.push({
      name: refName.slice(HEADS.length),
      current: refName === currentRef,
      lastCommit: { hash, message, author, date: utcDate(date) },
    });
  }
  return branches;
}

/**
 * The workspace's local branches in ref-name order, marking the checked-out one. An unborn branch
 * (a repository with no commit yet) has no ref to list, so it is put first, current, with no commit.
 */
export async function listBranches(store: Store, config: Pick<Config, 'DATABASE_URL'>, workspaceId: string): Promise<BranchEntry[]> {
  const workspace = await requireWorkspace(store, workspaceId);
  await requireRepository(store, config, workspace);
  const [refs, head] = await inWorkspaceGit(() =>
    Promise.all([
      runGit(workspace, ['for-each-ref', FORMAT, HEADS]),
      // -q: a detached HEAD prints nothing; its exit code 1 is then no failure.
      runGit(workspace, ['symbolic-ref', '-q', 'HEAD']).catch(() => ''),
    ]),
  );
  const currentRef = head.trim();
  const branches = parseBranchRefs(refs, currentRef);
  if (currentRef.startsWith(HEADS) && !branches.some((branch) => branch.current)) {
    branches.unshift({ name: currentRef.slice(HEADS.length), current: true, lastCommit: null });
  }
  return branches;
}
