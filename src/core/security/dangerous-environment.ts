/** What a variable name must look like (CONTRACT §4), in a terminal's `environment` and in a command line. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

// Each of these makes a shell, the dynamic loader or a runtime load or run code of the caller's
// choosing (LD_PRELOAD, BASH_ENV, NODE_OPTIONS=--require, GIT_SSH_COMMAND, …) or changes how every
// later word is split and looked up (IFS, PATH). One list serves the terminal API (refused with
// 400) and the risk analyser (an assignment is high), as CONTRACT §4 requires.
const exactNames: ReadonlySet<string> = new Set([
  'BASH_ENV',
  'ENV',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'IFS',
  'PATH',
  'NODE_OPTIONS',
  'GIT_SSH_COMMAND',
  'GIT_CONFIG',
  'GIT_EXEC_PATH',
  'PYTHONSTARTUP',
  'PERL5OPT',
  'RUBYOPT',
  // less runs LESSOPEN's command on each file, and without LESSSECURE its `!` runs any command.
  'LESSOPEN',
  'LESSCLOSE',
  'LESSSECURE',
]);

const dangerousPrefixes: readonly string[] = ['LD_', 'DYLD_', 'GIT_CONFIG_'];

/** Whether assigning `name` lets the assigner run code or change how commands are found (CONTRACT §4). */
export function isDangerousEnvName(name: string): boolean {
  return exactNames.has(name) || dangerousPrefixes.some((prefix) => name.startsWith(prefix));
}
