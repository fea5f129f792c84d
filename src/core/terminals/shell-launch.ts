import { existsSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { bwrapArguments } from '../sandbox/bwrap-arguments.js';
import type { SandboxState } from '../sandbox/sandbox-state.js';
import type { ShellLaunch } from './shell-session.js';

/** No startup files (they could print or redefine anything), no line editing (we are not a human). */
const SHELL = ['bash', '--norc', '--noprofile', '--noediting', '-i'];

const setprivPath = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

export interface ShellPlacement {
  sandbox: SandboxState;
  workingDirectory: string;
  /** Directories the sandbox makes writable. */
  writable: readonly string[];
  /** Service files masked inside the sandbox. */
  hidden: readonly string[];
  home: string;
  /** The caller's variables, already checked against the dangerous-name list. */
  environment: Readonly<Record<string, string>>;
}

function userName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'assistant';
  }
}

/**
 * A fresh environment: nothing of the service's own (its API keys, database URL) reaches a
 * shell. Pagers are `cat` and Git never prompts, so no command waits for a human by accident;
 * `less`, run by hand, cannot run commands typed into it (LESSSECURE, kept read-only by the shell).
 */
function shellEnvironment(home: string, environment: Readonly<Record<string, string>>): Record<string, string> {
  const user = userName();
  return {
    PATH: process.env.PATH ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
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
    LESSSECURE: '1',
  };
}

/** How to start one terminal's shell under the sandbox in force. */
export function shellLaunch(placement: ShellPlacement): ShellLaunch {
  const env = shellEnvironment(placement.home, placement.environment);
  const cwd = placement.workingDirectory;
  if (placement.sandbox.mode === 'bwrap') {
    const args = bwrapArguments({
      writable: placement.writable,
      serviceHome: homedir(),
      home: placement.home,
      hidden: placement.hidden,
      network: placement.sandbox.network,
      workingDirectory: cwd,
    });
    return { file: 'bwrap', args: [...args, ...SHELL], sandboxed: true, env, cwd };
  }
  // Unsandboxed (SANDBOX=none): the shell still dies with the service, by a parent-death signal.
  if (setprivPath) return { file: setprivPath, args: ['--pdeathsig', 'KILL', '--', ...SHELL], sandboxed: false, env, cwd };
  return { file: SHELL[0] ?? 'bash', args: SHELL.slice(1), sandboxed: false, env, cwd };
}
