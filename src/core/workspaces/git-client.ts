import { homedir } from 'node:os';
import { fileURLToPath } from 'node:url';
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
// - Other programs a repository's config can name (clean/smudge filters, textconv, gpg.program)
//   have no such switch, so with a working sandbox every call runs through
//   scripts/confined-git.sh: bubblewrap, read-only, no network, the service's secrets masked.
// - `safe.directory=*` lets the service read repositories owned by another user (a mounted
//   checkout); with hooks and fsmonitor off and the call confined, ownership decides nothing.
// - The environment is built from scratch: simple-git would reject the GIT_* variables we set
//   unless they are named in `allowEnvironment`, and ambient GIT_DIR / GIT_WORK_TREE / GIT_CONFIG_*
//   from the service's own environment must not redirect a workspace's Git calls.
//   GIT_TERMINAL_PROMPT=0 keeps Git from waiting for a password; GIT_OPTIONAL_LOCKS=0 keeps
//   `status` from taking index.lock, so a refresh never collides with the user's own Git commands.
//   LC_ALL=C keeps Git's messages (carried to clients in errors) in one language.
const disablingConfig = ['core.hooksPath=/dev/null', 'core.fsmonitor=', 'safe.directory=*'];
const gitVariables = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' };
const confinedGit = fileURLToPath(new URL('../../../scripts/confined-git.sh', import.meta.url));

export interface GitConfinement {
  /** Whether calls run through bubblewrap (it works here, and SANDBOX is not `none`). */
  confined: boolean;
  /** The service's own folder and file to mask: the SQLite database's folder, `.env`. */
  hiddenDirectory?: string | undefined;
  hiddenFile?: string | undefined;
}

// Set once at start-up from the sandbox decision; every workspace function reads it here rather
// than threading it through each signature.
let confinement: GitConfinement = { confined: false };

export function confineGitCalls(setting: GitConfinement): void {
  confinement = setting;
}

function gitEnvironment(writable: string | undefined): Record<string, string> {
  const environment: Record<string, string> = { LC_ALL: 'C', ...gitVariables };
  for (const name of ['PATH', 'HOME'] as const) {
    const value = process.env[name];
    if (value !== undefined) environment[name] = value;
  }
  if (confinement.confined) {
    environment.ASSISTANT_GIT_PRIVATE_HOME = homedir();
    if (writable !== undefined) environment.ASSISTANT_GIT_WRITABLE = writable;
    if (confinement.hiddenDirectory !== undefined) environment.ASSISTANT_GIT_HIDE_DIR = confinement.hiddenDirectory;
    if (confinement.hiddenFile !== undefined) environment.ASSISTANT_GIT_HIDE_FILE = confinement.hiddenFile;
  }
  return environment;
}

/**
 * A Git client for one directory, which must exist (simple-git throws otherwise). `writable` is
 * the one folder a confined call may change (a branch switch); other calls change nothing.
 * simple-git is loaded on the first Git call, not at start-up.
 */
export async function gitFor(directory: string, options: { writable?: string } = {}): Promise<SimpleGit> {
  const { simpleGit } = await import('simple-git');
  return simpleGit({
    baseDir: directory,
    // The wrapper's path is the service's own, never a caller's: simple-git's check for unusual
    // characters in a custom binary guards against the latter.
    ...(confinement.confined ? { binary: confinedGit } : {}),
    config: disablingConfig,
    unsafe: { allowUnsafeHooksPath: true, allowUnsafeFsMonitor: true, allowUnsafeCustomBinary: true },
    allowEnvironment: Object.keys(gitVariables),
    timeout: { block: GIT_TIMEOUT_MS },
  }).env(gitEnvironment(options.writable));
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
