import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname } from 'node:path';
import { terminalSandboxArguments, type RuntimeFolder } from '../sandbox/bwrap-arguments.js';
import type { SandboxCgroup } from '../sandbox/cgroup-limits.js';
import { launchPrefix } from '../sandbox/launch-prefix.js';
import type { PinnedBinds } from '../sandbox/pinned-binds.js';
import type { SandboxLimits } from '../sandbox/sandbox-limits.js';
import type { SandboxState } from '../sandbox/sandbox-state.js';
import type { ShellLaunch } from './shell-session.js';

/** No startup files (they could print or redefine anything), no line editing (we are not a human). */
const SHELL = ['bash', '--norc', '--noprofile', '--noediting', '-i'];

const setprivPath = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

/**
 * The shell's PATH: the system's read-only folders only. The service's own PATH may name folders
 * under its user's home (~/.cargo/bin), which is a private writable folder inside: a program a
 * command planted there would run in place of `ls` the next time, judged as `ls`.
 */
const SYSTEM_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Descriptors one command may hold open: enough for builds, not for exhausting the host's. */
const OPEN_FILES = 4096;

/** Where the terminal's proxy socket folder appears inside the sandbox, and the bridge's port there. */
const PROXY_FOLDER = '/run/assistant-net';
const PROXY_PORT = 3128;

export interface ShellPlacement {
  sandbox: SandboxState;
  workingDirectory: string;
  /** The workspaces the sandbox makes writable, opened by the service (pinned-binds.ts). */
  pins: PinnedBinds;
  /** Folders made empty inside (a start folder outside the workspaces that may not be opened). */
  emptyFolders?: readonly string[];
  /** Service files masked inside the sandbox. */
  hidden: readonly string[];
  home: string;
  /** The caller's variables, already checked against the dangerous-name list. */
  environment: Readonly<Record<string, string>>;
  limits: SandboxLimits;
  /** The terminal's cgroup, joined before the sandbox starts; without one, limits are per process. */
  cgroup?: SandboxCgroup | null;
  /** The folder of the terminal's egress proxy socket (SANDBOX_NETWORK=proxy). */
  proxyFolder?: string | null;
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'assistant';
  }
}

/** Every spelling of the proxy variables that curl, git, npm, pip and the rest read. */
function proxyVariables(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT}`;
  const variables: Record<string, string> = {};
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    variables[name] = url;
    variables[name.toLowerCase()] = url;
  }
  return variables;
}

/**
 * A fresh environment: nothing of the service's own (its API keys, database URL) reaches a
 * shell. Pagers are `cat` and Git never prompts, so no command waits for a human by accident;
 * `less`, run by hand, cannot run commands typed into it (LESSSECURE, kept read-only by the
 * shell). Behind the proxy, the proxy variables come last so a terminal's own cannot replace
 * them (which would only lose it the network, but would be confusing).
 */
function shellEnvironment(home: string, environment: Readonly<Record<string, string>>, sandboxed: boolean, behindProxy: boolean): Record<string, string> {
  const user = userName();
  // Node.js, should it live outside /usr, is bound read-only inside (system-view.ts).
  const node = dirname(process.execPath);
  const path = node.startsWith('/usr/') ? SYSTEM_PATH : `${SYSTEM_PATH}:${node}`;
  return {
    PATH: sandboxed ? path : (process.env.PATH ?? SYSTEM_PATH),
    HOME: home,
    USER: user,
    LOGNAME: user,
    SHELL: '/bin/bash',
    TERM: 'xterm-256color',
    LANG: process.env.LANG ?? 'C.UTF-8',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    GIT_TERMINAL_PROMPT: '0',
    ...environment,
    ...(behindProxy ? proxyVariables() : {}),
    LESSSECURE: '1',
  };
}

/**
 * Started inside the sandbox before the shell: socat listens on the sandbox's own loopback and
 * carries each connection to the service's proxy through the socket bound in. It runs in a
 * session of its own (no terminal, so no job control or Ctrl-C reaches it), and the shell
 * starts once it listens, so the first command already has the network.
 */
function proxyBridge(): string {
  const listening = `:${PROXY_PORT.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`;
  return [
    `setsid socat TCP-LISTEN:${PROXY_PORT},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:${PROXY_FOLDER}/proxy.sock </dev/null >/dev/null 2>&1 &`,
    `i=0; while ! grep -q '${listening}' /proc/net/tcp 2>/dev/null && [ $i -lt 500 ]; do i=$((i+1)); sleep 0.01; done; unset i; `,
  ].join(' ');
}

/**
 * Before bubblewrap starts (launch-prefix.ts): join the terminal's cgroup, reopen the pinned
 * workspaces, and set the rlimits: the file size and open files always, the address space too when
 * there is no cgroup to bound memory.
 */
function hostPrefix(placement: ShellPlacement): string[] {
  const { cgroup, limits, sandbox } = placement;
  const cgroupFiles = cgroup?.procsFiles() ?? [];
  const rlimits = [`--fsize=${limits.fileSizeBytes}`, '--core=0', `--nofile=${OPEN_FILES}`];
  if (cgroupFiles.length === 0) rlimits.push(`--as=${limits.memoryBytes}`);
  return launchPrefix({ cgroupFiles, pins: sandbox.mode === 'bwrap' ? placement.pins : null, prlimit: sandbox.prlimit, rlimits });
}

/** How to start one terminal's shell under the sandbox in force. */
export function shellLaunch(placement: ShellPlacement): ShellLaunch {
  const cwd = placement.workingDirectory;
  const { sandbox } = placement;
  if (sandbox.mode === 'bwrap') {
    const behindProxy = sandbox.network === 'proxy' && placement.proxyFolder != null;
    const runtime: RuntimeFolder[] = behindProxy && placement.proxyFolder ? [{ source: placement.proxyFolder, target: PROXY_FOLDER }] : [];
    const args = terminalSandboxArguments({
      isolation: { network: sandbox.network, userNamespace: sandbox.userNamespace },
      tmpBytes: placement.limits.tmpBytes,
      pins: placement.pins,
      emptyFolders: placement.emptyFolders ?? [],
      serviceHome: homedir(),
      home: placement.home,
      hidden: placement.hidden,
      runtime,
      workingDirectory: cwd,
    });
    return {
      prefix: hostPrefix(placement),
      sandbox: args,
      setup: behindProxy ? proxyBridge() : '',
      shell: SHELL,
      env: shellEnvironment(placement.home, placement.environment, true, behindProxy),
      cwd,
      pins: placement.pins,
    };
  }
  // Unsandboxed (SANDBOX=none): the shell still dies with the service, by a parent-death signal.
  const shell = setprivPath ? [setprivPath, '--pdeathsig', 'KILL', '--', ...SHELL] : SHELL;
  return { prefix: hostPrefix(placement), sandbox: null, setup: '', shell, env: shellEnvironment(placement.home, placement.environment, false, false), cwd };
}
