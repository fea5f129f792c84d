import { spawnSync } from 'node:child_process';
import { describe } from 'vitest';
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
