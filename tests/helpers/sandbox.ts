import { spawnSync } from 'node:child_process';
import { describe } from 'vitest';
import { homedir } from 'node:os';
import { PinnedBinds } from '../../src/core/sandbox/pinned-binds.js';
import { defaultSandboxLimits } from '../../src/core/sandbox/sandbox-limits.js';
import type { SandboxState } from '../../src/core/sandbox/sandbox-state.js';
import type { ShellPlacement } from '../../src/core/terminals/shell-launch.js';
import { describeOnDatabases, type DatabaseKind } from './databases.js';

// Terminal tests run shells in a real bubblewrap sandbox. CI must run them (it installs
// bubblewrap), so there a missing one fails the suite; elsewhere they are skipped, saying why.

function probeBubblewrap(): string | null {
  const result = spawnSync('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--cap-drop', 'ALL', '--', '/bin/true'], {
    timeout: 5000,
    encoding: 'utf8',
  });
  if (result.error) return result.error.message;
  return result.status === 0 ? null : result.stderr.trim() || `exit ${String(result.status)}`;
}

const problem = probeBubblewrap();

export const sandboxAvailable: boolean = (() => {
  if (problem === null) return true;
  if (process.env.CI === 'true') throw new Error(`bubblewrap is required in CI: ${problem}`);
  console.warn(`Terminal and sandbox tests skipped: bubblewrap does not work here (${problem}); apt-get install bubblewrap`);
  return false;
})();

/** A suite that needs a working sandbox; declared skipped (and counted) without one. */
export function describeWithSandbox(name: string, body: () => void): void {
  describe.skipIf(!sandboxAvailable)(name, body);
}

/** describeOnDatabases for suites whose terminals need the sandbox. */
export function describeOnDatabasesWithSandbox(name: string, body: (kind: DatabaseKind) => void): void {
  describe.skipIf(!sandboxAvailable)(name, () => {
    describeOnDatabases(name, body);
  });
}

/** A bubblewrap sandbox as the service decides it here, without the service: for ShellSession tests. */
export const bwrapSandbox: SandboxState = {
  mode: 'bwrap',
  network: 'none',
  userNamespace: true,
  limits: 'per-process',
  cgroups: null,
  prlimit: null,
};

/** A shell placed in one workspace, as createTerminal would place it (no cgroup, no network). */
export function placementIn(workspace: string): ShellPlacement {
  const pins = new PinnedBinds();
  pins.addWorkspace(workspace, null, { writable: true, protectGit: true });
  return { sandbox: bwrapSandbox, workingDirectory: workspace, pins, hidden: [], home: homedir(), environment: {}, limits: defaultSandboxLimits };
}
