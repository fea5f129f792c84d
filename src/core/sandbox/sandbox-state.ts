import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Config } from '../config/load-config.js';
import { isolationArguments, procArguments, type NetworkMode } from './bwrap-arguments.js';
import { detectCgroups, type CgroupSupport } from './cgroup-limits.js';
import { systemViewArguments } from './system-view.js';

/** The sandbox in force for terminal shells, as `/api/status` names it (CONTRACT §4). */
export type SandboxMode = 'bwrap' | 'none' | 'unavailable';

/** How per-terminal limits are enforced (CONTRACT §11): a cgroup per terminal, or rlimits per process. */
export type LimitsMode = 'cgroup' | 'per-process';

export interface SandboxState {
  mode: SandboxMode;
  network: NetworkMode;
  /** The sandbox's own user namespace with nested ones disabled (see bwrap-arguments.ts). */
  userNamespace: boolean;
  limits: LimitsMode;
  cgroups: CgroupSupport | null;
  /** util-linux's prlimit, which sets a terminal's rlimits before the sandbox starts; null without it. */
  prlimit: string | null;
  /** Why commands are refused, with the fix; set when mode is `unavailable`. */
  problem?: string;
}

const PROBE_TIMEOUT_MS = 5000;
const PROBE_DONE = 'assistant-sandbox-probe-done';

/**
 * Run inside a sandbox built exactly as a terminal's: every line it prints is a rule that does
 * not hold. The hostname write uses the same value, so a probe that succeeds changes nothing.
 */
const PROBE_SCRIPT = [
  'name=$(cat /proc/sys/kernel/hostname)',
  `{ printf '%s\\n' "$name" > /proc/sys/kernel/hostname; } 2>/dev/null && echo 'kernel settings are writable (/proc/sys/kernel/hostname)'`,
  `if command -v unshare >/dev/null; then unshare --user true 2>/dev/null && echo 'a command can create a user namespace'; else echo 'unshare is missing, so nested user namespaces cannot be checked'; fi`,
].join('\n');

function runBwrap(args: string[]): Promise<{ ok: true; stdout: string } | { ok: false; missing: boolean; message: string }> {
  return new Promise((resolve) => {
    // The service's own PATH finds bubblewrap, as it will for every terminal.
    execFile('bwrap', args, { timeout: PROBE_TIMEOUT_MS, env: { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' } }, (error, stdout, stderr) => {
      if (!error) resolve({ ok: true, stdout });
      else resolve({ ok: false, missing: (error as NodeJS.ErrnoException).code === 'ENOENT', message: stderr.trim() || error.message });
    });
  });
}

function probeArguments(network: NetworkMode, userNamespace: boolean, script: string): string[] {
  return [
    ...isolationArguments({ network, userNamespace }),
    '--dev',
    '/dev',
    ...procArguments(),
    ...systemViewArguments({ etc: true }),
    '--tmpfs',
    '/tmp',
    '--remount-ro',
    '/',
    '--',
    '/bin/sh',
    '-c',
    script,
  ];
}

const unavailable = (base: Omit<SandboxState, 'mode' | 'problem'>, problem: string): SandboxState => ({ ...base, mode: 'unavailable', problem });

export type ProbeResult = { ok: true; broken: string[] } | { ok: false; missing: boolean; message: string };

/**
 * Makes a sandbox exactly as a terminal's would be made and runs, inside it, what must fail
 * there; `broken` lists each rule that did not hold (empty: the sandbox confines). Exported so
 * tests can show that it fails closed.
 */
export async function probeSandbox(network: NetworkMode, userNamespace: boolean): Promise<ProbeResult> {
  const needs = network === 'proxy' ? "\nfor tool in socat setsid; do command -v $tool >/dev/null || echo \"$tool is missing (the proxy's bridge needs it)\"; done" : '';
  // The last line proves the script ran to its end inside the sandbox (bubblewrap's own
  // failures print nothing on standard output).
  const result = await runBwrap(probeArguments(network, userNamespace, `${PROBE_SCRIPT}${needs}\necho ${PROBE_DONE}`));
  if (!result.ok) return result;
  if (!result.stdout.includes(PROBE_DONE)) return { ok: false, missing: false, message: 'the probe did not run to its end' };
  return { ok: true, broken: result.stdout.split('\n').filter((line) => line.trim() !== '' && line !== PROBE_DONE) };
}

/**
 * Decides the sandbox once at start-up (CONTRACT §4, §11). SANDBOX=auto and SANDBOX=bwrap both
 * require a working bubblewrap that confines as §11 demands: a sandbox is made exactly as a
 * terminal's is and tries what must fail inside it (a kernel-setting write, a nested user
 * namespace); if either succeeds, system commands are refused, naming why. The proxy's bridge
 * (socat) must be present for SANDBOX_NETWORK=proxy. Only an explicit SANDBOX=none runs shells
 * unsandboxed.
 */
export async function detectSandbox(config: Config): Promise<SandboxState> {
  const cgroups = detectCgroups();
  const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find((path) => existsSync(path)) ?? null;
  const limits: LimitsMode = cgroups ? 'cgroup' : 'per-process';
  if (config.SANDBOX === 'none') return { mode: 'none', network: 'host', userNamespace: false, limits, cgroups, prlimit };
  const network = config.SANDBOX_NETWORK;
  // The user namespace is preferred; a host that refuses one still gets a sandbox, which the
  // probe then holds to the same rules.
  let userNamespace = true;
  let result = await probeSandbox(network, true);
  if (!result.ok && !result.missing) {
    userNamespace = false;
    result = await probeSandbox(network, false);
  }
  const base = { network, userNamespace, limits, cgroups, prlimit };
  if (!result.ok) {
    const failure = result.missing ? 'bubblewrap (bwrap) is not installed' : `bubblewrap cannot create a sandbox here: ${result.message}`;
    return unavailable(base, `${failure}; install it (apt-get install bubblewrap) or set SANDBOX=none to run commands without a sandbox`);
  }
  if (result.broken.length > 0) {
    const fix = result.broken.some((line) => line.includes('socat') || line.includes('setsid'))
      ? 'install socat (apt-get install socat) or set SANDBOX_NETWORK=none'
      : 'run the service on a host whose kernel lets bubblewrap confine commands (user namespaces, read-only /proc/sys)';
    return unavailable(base, `the sandbox does not confine commands here: ${result.broken.join('; ')}; ${fix}`);
  }
  return { ...base, mode: 'bwrap' };
}
