import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { AppError } from '../errors/app-error.js';
import { PinError } from '../sandbox/pinned-binds.js';
import type { SandboxState } from '../sandbox/sandbox-state.js';
import { prepareWorkspaceProcess, type WorkspaceIdentity } from '../sandbox/workspace-process.js';

/** No Git call may hold a request longer than this (a hung lock, a slow disk, a hostile repository). */
export const GIT_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 32 * 1024 * 1024;
/** What one Git call and whatever a repository makes it run may use. */
const GIT_LIMITS = { memoryBytes: 512 * 1024 * 1024, processes: 64 };

// Every Git process the service starts is started here, so the rules of CONTRACT §11 ("the
// service's own Git calls") hold for all of them:
//
// - GIT_DIR, GIT_COMMON_DIR and GIT_WORK_TREE name the registered workspace's own `.git` and
//   folder. Nothing a repository says (a `.git` file, `commondir`, `core.worktree`) can then
//   point Git at another folder; the caller has also checked the layout (workspace-integrity.ts).
// - Programs a repository's configuration names are not run: hooks and fsmonitor have switches
//   (`core.hooksPath=/dev/null`, `core.fsmonitor=`); the pager, credential helpers and gpg are
//   blanked, and no protocol may be used; clean/smudge/process filters, textconv and merge drivers have no switch,
//   so the ones the repository defines are found and blanked one by one (GIT_CONFIG_KEY_n) by a
//   few lines of shell before Git runs. The user's and the system's configuration are not read.
// - Submodules are never entered: a submodule's own configuration (.git/modules/<x>/config) is
//   not blanked, and `status` would run its filters.
// - With a sandbox, each call runs under bubblewrap seeing the programs and this one workspace
//   (pinned by descriptor), read-only unless the call is a branch switch, with no network, in a
//   cgroup of its own: whatever slipped through could reach nothing else and use little.
//   Without one (SANDBOX=none) the same rules apply unconfined.
// - `safe.directory=*`: repositories owned by another user are read as well; ownership protects
//   against the programs above, which are off.
const DISABLING_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=',
  'safe.directory=*',
  'core.pager=cat',
  // An empty value empties Git's list of credential helpers.
  'credential.helper=',
  'gpg.program=false',
  // No call of ours needs the network; a partial clone would otherwise fetch during `status`.
  'protocol.allow=never',
  'submodule.recurse=false',
  'diff.ignoreSubmodules=all',
  'status.submoduleSummary=false',
].flatMap((setting) => ['-c', setting]);

/** Blanks every driver program the repository's configuration defines, then runs Git. */
const BLANK_DRIVERS = [
  'keys=$(git config --name-only --get-regexp \'^(filter\\..*\\.(clean|smudge|process|required)|diff\\..*\\.(textconv|command)|merge\\..*\\.driver)$\' 2>/dev/null)',
  'i=0',
  'while IFS= read -r key; do',
  '  [ -n "$key" ] || continue',
  '  case "$key" in *.required) value=false ;; *) value= ;; esac',
  '  export "GIT_CONFIG_KEY_$i=$key" "GIT_CONFIG_VALUE_$i=$value"',
  '  i=$((i+1))',
  'done <<EOF',
  '$keys',
  'EOF',
  'export GIT_CONFIG_COUNT=$i',
  'exec git "$@"',
].join('\n');

// Set once at start-up from the sandbox decision; every workspace function reads it here rather
// than threading it through each signature. Null: unconfined (SANDBOX=none, or not decided).
let sandboxInForce: SandboxState | null = null;

export function confineGitCalls(sandbox: SandboxState): void {
  sandboxInForce = sandbox.mode === 'bwrap' ? sandbox : null;
}

/** A Git call that failed: Git's own message (stderr), in English (LC_ALL=C). */
export class GitError extends Error {
  override name = 'GitError';
}

function gitEnvironment(workspace: string, confined: boolean): Record<string, string> {
  const gitDir = join(workspace, '.git');
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    // Inside the sandbox /tmp is private; unconfined, a home Git cannot find a config in.
    HOME: confined ? '/tmp' : '/nonexistent',
    LC_ALL: 'C',
    GIT_DIR: gitDir,
    GIT_COMMON_DIR: gitDir,
    GIT_WORK_TREE: workspace,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    // `status` would otherwise take index.lock and collide with the user's own Git commands.
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
  };
}

/**
 * Runs `git <args>` on a registered workspace and returns its standard output. `writable` lets
 * the call change the workspace (a branch switch); every other call sees it read-only.
 */
export async function runGit(workspace: WorkspaceIdentity, args: readonly string[], options: { writable?: boolean } = {}): Promise<string> {
  const command = ['/bin/sh', '-c', BLANK_DRIVERS, 'git', ...DISABLING_CONFIG, ...args];
  const sandbox = sandboxInForce;
  if (sandbox === null) return execGit(command, workspace.path, false);
  let prepared: ReturnType<typeof prepareWorkspaceProcess>;
  try {
    prepared = prepareWorkspaceProcess({ sandbox, workspace, writable: options.writable === true, limits: GIT_LIMITS, kind: 'git' }, command);
  } catch (error) {
    throw new GitError(error instanceof PinError ? error.message : `Git could not be started: ${String(error)}`);
  }
  try {
    return await execGit(prepared.argv, workspace.path, true);
  } finally {
    await prepared.release();
  }
}

function execGit(argv: readonly string[], workspace: string, confined: boolean): Promise<string> {
  const [file = '/bin/sh', ...rest] = argv;
  return new Promise((resolve, reject) => {
    execFile(
      file,
      rest,
      { cwd: workspace, env: gitEnvironment(workspace, confined), timeout: GIT_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (!error) resolve(stdout);
        else if (error.killed) reject(new GitError(`Git did not finish within ${GIT_TIMEOUT_MS / 1000} s`));
        else reject(new GitError(stderr.trim() || error.message));
      },
    );
  });
}

/** Git's own message of a failed call, without the trailing newline. */
export function gitMessage(error: unknown): string {
  return error instanceof Error ? error.message.trim() : String(error);
}

/**
 * Runs Git work for a request: a repository Git cannot read (a corrupt ref, a timeout) is a
 * problem of that workspace, answered 400 WORKSPACE_ERROR with Git's message, not a server fault.
 */
export async function inWorkspaceGit<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError('WORKSPACE_ERROR', `Git failed: ${gitMessage(error)}`);
  }
}
