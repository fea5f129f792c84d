import { randomUUID } from 'node:crypto';
import { workspaceSandboxArguments, type RuntimeFolder } from './bwrap-arguments.js';
import { SandboxCgroup, type TerminalLimits } from './cgroup-limits.js';
import { launchPrefix } from './launch-prefix.js';
import { PinnedBinds } from './pinned-binds.js';
import type { SandboxState } from './sandbox-state.js';

// A process that works on one workspace for the service (a Git call, a file helper), prepared
// the way a terminal is (CONTRACT §11): the workspace pinned by descriptor, a cgroup of its own
// bounding memory and processes (a repository's filter could otherwise fork or allocate without
// end), rlimits, and bubblewrap seeing the programs and that workspace only.

const TMP_BYTES = 64 * 1024 * 1024;
const OPEN_FILES = 1024;
const FILE_SIZE_BYTES = 1024 * 1024 * 1024;

export interface WorkspaceIdentity {
  path: string;
  device: string | null;
  inode: string | null;
}

export interface WorkspaceProcessOptions {
  sandbox: SandboxState;
  workspace: WorkspaceIdentity;
  /** Whether the process may change the workspace (a branch switch, the file helper's writes). */
  writable: boolean;
  limits: TerminalLimits;
  /** Names its cgroup (`git`, `helper`). */
  kind: string;
  runtime?: readonly RuntimeFolder[];
}

export interface WorkspaceProcess {
  /** The full command line: the host prefix, bubblewrap, then the command. */
  argv: string[];
  pins: PinnedBinds;
  /** Once the process has ended (or failed to start): its leftovers killed, its cgroup removed. */
  release(): Promise<void>;
}

/**
 * Prepares `command` to run confined on one workspace. Throws PinError when the workspace is not
 * the registered folder any more. The caller closes `pins` once the sandbox has started and calls
 * `release` after the process has ended.
 */
export function prepareWorkspaceProcess(options: WorkspaceProcessOptions, command: readonly string[]): WorkspaceProcess {
  const { sandbox, workspace, writable, limits } = options;
  const pins = new PinnedBinds();
  const identity = workspace.device !== null && workspace.inode !== null ? { device: workspace.device, inode: workspace.inode } : null;
  pins.addWorkspace(workspace.path, identity, { writable, protectGit: writable });
  let cgroup: SandboxCgroup | null = null;
  try {
    if (sandbox.cgroups) cgroup = SandboxCgroup.create(sandbox.cgroups, `${options.kind}-${randomUUID()}`, limits);
  } catch (error) {
    pins.close();
    throw error;
  }
  const rlimits = [`--fsize=${FILE_SIZE_BYTES}`, '--core=0', `--nofile=${OPEN_FILES}`];
  if (cgroup === null) rlimits.push(`--as=${limits.memoryBytes}`);
  const prefix = launchPrefix({ cgroupFiles: cgroup?.procsFiles() ?? [], pins, prlimit: sandbox.prlimit, rlimits });
  const bwrap = workspaceSandboxArguments({
    userNamespace: sandbox.userNamespace,
    workspace: workspace.path,
    pins,
    tmpBytes: TMP_BYTES,
    ...(options.runtime ? { runtime: options.runtime } : {}),
  });
  let released: Promise<void> | null = null;
  return {
    argv: [...prefix, 'bwrap', ...bwrap, ...command],
    pins,
    release() {
      released ??= (async () => {
        pins.close();
        cgroup?.killAll();
        await cgroup?.remove();
      })();
      return released;
    },
  };
}
