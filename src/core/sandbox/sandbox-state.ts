import { execFile } from 'node:child_process';
import type { Config } from '../config/load-config.js';
import { isolationArguments } from './bwrap-arguments.js';

/** The sandbox in force for terminal shells, as `/api/status` names it (CONTRACT §4). */
export type SandboxMode = 'bwrap' | 'none' | 'unavailable';

export interface SandboxState {
  mode: SandboxMode;
  /** Whether sandboxed shells reach the network (SANDBOX_NETWORK). */
  network: boolean;
  /** Why bubblewrap cannot be used, with the fix; set when mode is `unavailable`. */
  problem?: string;
}

const PROBE_TIMEOUT_MS = 5000;

/**
 * Decides the sandbox once at start-up. SANDBOX=auto and SANDBOX=bwrap both require a working
 * bubblewrap: it is probed with the very isolation flags the shells get, so a kernel or container
 * that refuses one of them (say, PID namespaces) is found here and not at the first terminal.
 * Only an explicit SANDBOX=none runs shells unsandboxed.
 */
export async function detectSandbox(config: Config): Promise<SandboxState> {
  const network = config.SANDBOX_NETWORK;
  if (config.SANDBOX === 'none') return { mode: 'none', network: true };
  const args = [...isolationArguments({ network }), '--', '/bin/true'];
  const failure = await new Promise<string | null>((resolve) => {
    execFile('bwrap', args, { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) resolve(null);
      else if ((error as NodeJS.ErrnoException).code === 'ENOENT') resolve('bubblewrap (bwrap) is not installed');
      else resolve(`bubblewrap cannot create a sandbox here: ${stderr.trim() || error.message}`);
    });
  });
  if (failure === null) return { mode: 'bwrap', network };
  return {
    mode: 'unavailable',
    network,
    problem: `${failure}; install it (apt-get install bubblewrap) or set SANDBOX=none to run commands without a sandbox`,
  };
}
