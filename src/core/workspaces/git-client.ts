import type { SimpleGit } from 'simple-git';
import { AppError } from '../errors/app-error.js';

/** No Git call may hold a request longer than this without output (a hung lock, a slow disk). */
export const GIT_TIMEOUT_MS = 10_000;

// Every Git process the service starts is built here, so the rules below hold for all of them
// (CONTRACT §4, "the service's own Git calls"):
//
// - `core.hooksPath=/dev/null` and `core.fsmonitor=` are set to DISABLE a repository's hooks and
//   its fsmonitor command: a workspace's `.git/config` and `.git/hooks` are writable by whoever
//   can write the workspace, and neither may make the service run their programs. simple-git
//   refuses any setting of these two keys unless told the setting is intended, hence `unsafe`.
// - `safe.directory=*` lets the service read repositories owned by another user (a mounted
//   checkout); with hooks and fsmonitor off, that ownership no longer decides what runs.
// - The environment is built from scratch: simple-git would reject the GIT_* variables we set
//   unless they are named in `allowEnvironment`, and ambient GIT_DIR / GIT_WORK_TREE / GIT_CONFIG_*
//   from the service's own environment must not redirect a workspace's Git calls.
//   GIT_TERMINAL_PROMPT=0 keeps Git from waiting for a password; GIT_OPTIONAL_LOCKS=0 keeps
//   `status` from taking index.lock, so a refresh never collides with the user's own Git commands.
//   LC_ALL=C keeps Git's messages (carried to clients in errors) in one language.
const disablingConfig = ['core.hooksPath=/dev/null', 'core.fsmonitor=', 'safe.directory=*'];
const gitVariables = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };

function gitEnvironment(): Record<string, string> {
  const environment: Record<string, string> = { LC_ALL: 'C', ...gitVariables };
  for (const name of ['PATH', 'HOME'] as const) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  return environment;
}

/**
 * A Git client for one directory, which must exist (simple-git throws otherwise). simple-git is
 * loaded on the first Git call, not at start-up: most of its weight is never needed by a service
 * without workspaces.
 */
export async function gitFor(directory: string): Promise<SimpleGit> {
  const { simpleGit } = await import('simple-git');
  return simpleGit({
    baseDir: directory,
    config: disablingConfig,
    unsafe: { allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true },
    allowEnvironment: Object.keys(gitVariables),
    timeout: { block: GIT_TIMEOUT_MS },
  }).env(gitEnvironment());
}

/** Git's own message of a failed call (its stderr), without the trailing newline. */
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
