import { copyScope, type Argument, type CommandRule, type Effects, type Invocation, type Scope } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf, type OptionSyntax } from './command-options.js';
import { interactiveReason, reportHiddenCode, runCodeArgument, runStdinProgram } from './code-strings.js';
import { checkRead, checkWrite } from './path-access.js';
import { literalValue, plainText } from './shell-words.js';
import { checkAssignedName } from './variable-assignments.js';

/** Runs what follows a wrapper's options (and `skip` fixed operands such as timeout's DURATION). */
function runWrapped(invocation: Invocation, args: readonly Argument[], scope: Scope = invocation.scope): Effects | undefined {
  if (args.length === 0) {
    invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
    return undefined;
  }
  return invocation.engine.runCommand(args, scope, invocation.stdin, invocation.trailingOperands);
}

function wrapper(syntax: OptionSyntax, skip = 0, noCommand: readonly string[] = []): CommandRule {
  return (invocation) => {
    const parsed = parseOptions(invocation.args, { ...syntax, stopAtOperand: true });
    if (noCommand.length > 0 && hasOption(parsed, ...noCommand)) {
      invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
      return undefined;
    }
    return runWrapped(invocation, invocation.args.slice(parsed.rest + skip));
  };
}

const execWrapped = wrapper({ valued: 'a' });

/** `exec -c` runs its command with an empty environment, as `env -i` does. */
const execWrapper: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'a', stopAtOperand: true });
  if (hasOption(parsed, '-c') && parsed.rest < invocation.args.length) {
    invocation.engine.report('high', `runs a program without the terminal's safe environment: ${invocation.name} -c`);
  }
  return execWrapped(invocation);
};

/** Leading `NAME=value` words (env, sudo): each is an assignment in the wrapped command's environment. */
function takeAssignments(invocation: Invocation, args: readonly Argument[]): readonly Argument[] {
  let index = 0;
  for (; index < args.length; index += 1) {
    const text = textOf(args[index]);
    const match = text === null ? null : /^([^=]+)=(.*)$/s.exec(text);
    if (match?.[1] === undefined || match[1].startsWith('-')) break;
    checkAssignedName(invocation.engine, invocation.scope, match[1], literalValue(match[2] ?? ''));
  }
  return args.slice(index);
}

/** `env -C dir`, `sudo -D dir`: the wrapped command runs in another directory. */
function inDirectory(invocation: Invocation, directory: Argument | undefined): Scope {
  if (directory === undefined) return invocation.scope;
  const target = checkRead(invocation, directory);
  return copyScope(invocation.scope, { cwd: target.kind === 'path' ? target.located.real : null });
}

const env: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'uCS', valuedLong: ['--unset', '--chdir', '--split-string'], stopAtOperand: true });
  let rest: readonly Argument[] = invocation.args.slice(parsed.rest);
  const cleared = textOf(rest[0]) === '-' || hasOption(parsed, '-i', '--ignore-environment', '-u', '--unset');
  if (textOf(rest[0]) === '-') rest = rest.slice(1);
  // The terminal's environment keeps pagers non-interactive and `less` in its secure mode; without
  // it, `git log` or `less` run commands typed into them (see shell-launch.ts).
  if (cleared && rest.length > 0) invocation.engine.report('high', `runs a program without the terminal's safe environment: ${invocation.name}`);
  rest = takeAssignments(invocation, rest);
  const scope = inDirectory(invocation, optionValues(parsed, '-C', '--chdir').at(-1));
  const [split] = optionValues(parsed, '-S', '--split-string');
  if (split !== undefined) {
    const words = [split, ...rest].map((argument) => plainText(argument.value));
    if (words.some((word) => word === null)) {
      reportHiddenCode(invocation, split.remote, 'env -S');
      return undefined;
    }
    return invocation.engine.runScript(words.join(' '), scope, invocation.stdin);
  }
  return runWrapped(invocation, rest, scope);
};

const sudo: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  engine.report('high', `runs as another user: ${name}`);
  const parsed = parseOptions(invocation.args, {
    valued: name === 'doas' ? 'uC' : 'ugpCDrtTUR',
    valuedLong: ['--user', '--group', '--prompt', '--close-from', '--chdir', '--role', '--type', '--command-timeout', '--other-user', '--chroot', '--host'],
    stopAtOperand: true,
  });
  if (hasOption(parsed, '-e', '--edit')) {
    for (const file of invocation.args.slice(parsed.rest)) checkWrite(invocation, file);
    return undefined;
  }
  const rest = takeAssignments(invocation, invocation.args.slice(parsed.rest));
  if (rest.length === 0) {
    if (hasOption(parsed, '-s', '--shell', '-i', '--login')) return runStdinProgram(invocation, `${name} -s`, true);
    return undefined;
  }
  return runWrapped(invocation, rest, inDirectory(invocation, optionValues(parsed, '-D', '--chdir').at(-1)));
};

const pkexec: CommandRule = (invocation) => {
  invocation.engine.report('high', `runs as another user: ${invocation.name}`);
  const parsed = parseOptions(invocation.args, { valuedLong: ['--user'], stopAtOperand: true });
  const rest = invocation.args.slice(parsed.rest);
  return rest.length === 0 ? runStdinProgram(invocation, invocation.name, true) : runWrapped(invocation, rest);
};

/** su/runuser: `-c CODE` is shell code; `runuser -u user -- cmd` runs cmd; otherwise a login shell. */
const su: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  engine.report('high', `runs as another user: ${name}`);
  const parsed = parseOptions(invocation.args, {
    valued: 'cCsgGwu',
    valuedLong: ['--command', '--session-command', '--shell', '--group', '--supp-group', '--whitelist-environment', '--user'],
  });
  const codes = optionValues(parsed, '-c', '-C', '--command', '--session-command');
  if (codes.length > 0) {
    for (const code of codes) runCodeArgument(invocation, code, `${name} -c`);
    return undefined;
  }
  if (name === 'runuser' && hasOption(parsed, '-u', '--user')) return runWrapped(invocation, parsed.operands);
  return runStdinProgram(invocation, name, true);
};

/** xargs runs its command with operands read at run time: high in itself, and the command is analysed. */
const xargs: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  engine.report('high', `runs another program: ${name}`);
  const parsed = parseOptions(invocation.args, {
    valued: 'adEILnPs', attached: 'eil',
    valuedLong: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
    stopAtOperand: true,
  });
  for (const file of optionValues(parsed, '-a', '--arg-file')) checkRead(invocation, file);
  const command = invocation.args.slice(parsed.rest);
  const args = command.length > 0 ? command : [{ text: 'echo', value: literalValue('echo'), remote: false }];
  return engine.runCommand(args, copyScope(invocation.scope), { kind: 'terminal' }, true);
};

/** watch joins its operands into a line for `sh -c` (unless -x runs them directly). */
const watch: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'n', attached: 'd', valuedLong: ['--interval'], stopAtOperand: true });
  const rest = invocation.args.slice(parsed.rest);
  if (hasOption(parsed, '-x', '--exec')) return runWrapped(invocation, rest);
  const words = rest.map((argument) => plainText(argument.value));
  if (words.some((word) => word === null)) {
    reportHiddenCode(invocation, rest.some((argument) => argument.remote), invocation.name);
    return undefined;
  }
  return invocation.engine.runScript(words.join(' '), copyScope(invocation.scope), invocation.stdin);
};

const time: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'fo', valuedLong: ['--format', '--output'], stopAtOperand: true });
  for (const output of optionValues(parsed, '-o', '--output')) checkWrite(invocation, output);
  return runWrapped(invocation, invocation.args.slice(parsed.rest));
};

const command: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { stopAtOperand: true });
  if (hasOption(parsed, '-v', '-V')) {
    invocation.engine.report('low', 'read-only inspection');
    return undefined;
  }
  return runWrapped(invocation, invocation.args.slice(parsed.rest));
};

const flock: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'wEc', valuedLong: ['--timeout', '--conflict-exit-code', '--command'], stopAtOperand: true });
  const [lock, ...rest] = invocation.args.slice(parsed.rest);
  if (lock !== undefined && !/^\d+$/.test(textOf(lock) ?? '')) checkWrite(invocation, lock);
  // `flock FILE -c CODE`: flock stops at the file, then takes a -c right behind it.
  const after = textOf(rest[0]);
  const code = optionValues(parsed, '-c', '--command')[0] ?? (after === '-c' || after === '--command' ? rest[1] : undefined);
  if (code !== undefined) return runCodeArgument(invocation, code, 'flock -c');
  if (after === '-c' || after === '--command') {
    invocation.engine.report('high', 'runs code that cannot be analysed: flock -c');
    return undefined;
  }
  return runWrapped(invocation, rest);
};

/** The shell capsh runs, as if written on the line. */
const bashWord: Argument = { text: 'bash', value: literalValue('bash'), remote: false };

/**
 * unshare, nsenter, setpriv, capsh: new namespaces (a user namespace gives root's powers over the
 * user's own files, the terminal's command pipe among them) or changed privileges; then the
 * wrapped command, or an interactive shell when none is named.
 */
const privilegeChange = (syntax: OptionSyntax, separator = false): CommandRule => (invocation) => {
  invocation.engine.report('high', `changes namespaces or privileges: ${invocation.name}`);
  const parsed = parseOptions(invocation.args, { ...syntax, stopAtOperand: true });
  let rest = invocation.args.slice(parsed.rest);
  if (separator) {
    // capsh: what follows `--` is handed to /bin/bash, so `capsh -- -c CODE` is `bash -c CODE`.
    const end = invocation.args.findIndex((argument) => textOf(argument) === '--');
    if (end >= 0 && end + 1 < invocation.args.length) return runWrapped(invocation, [bashWord, ...invocation.args.slice(end + 1)]);
    rest = [];
  }
  if (rest.length === 0) {
    invocation.engine.report('high', interactiveReason(invocation.name));
    return undefined;
  }
  return runWrapped(invocation, rest);
};

const chroot: CommandRule = (invocation) => {
  invocation.engine.report('high', `changes the root directory: ${invocation.name}`);
  const parsed = parseOptions(invocation.args, { valuedLong: ['--userspec', '--groups'], stopAtOperand: true });
  const [root, ...rest] = invocation.args.slice(parsed.rest);
  if (root !== undefined) checkRead(invocation, root);
  // Inside the new root no path of this line means what it means here.
  return runWrapped(invocation, rest, copyScope(invocation.scope, { cwd: null, home: null }));
};

const script: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, {
    valued: 'cEIOBTm',
    valuedLong: ['--command', '--echo', '--log-in', '--log-out', '--log-io', '--log-timing', '--logging-format', '--output-limit'],
  });
  for (const log of optionValues(parsed, '-I', '-O', '-B', '-T', '--log-in', '--log-out', '--log-io', '--log-timing')) checkWrite(invocation, log);
  for (const file of parsed.operands) checkWrite(invocation, file);
  const [code] = optionValues(parsed, '-c', '--command');
  if (code !== undefined) return runCodeArgument(invocation, code, 'script -c');
  // Without -c it starts an interactive shell: what is typed into it is never analysed.
  invocation.engine.report('high', interactiveReason(invocation.name));
  return undefined;
};

const busybox: CommandRule = (invocation) => {
  const [applet] = invocation.args;
  if (applet === undefined || (textOf(applet) ?? '').startsWith('-')) {
    invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
    return undefined;
  }
  return invocation.engine.runCommand(invocation.args, invocation.scope, invocation.stdin, invocation.trailingOperands);
};

const parallel: CommandRule = (invocation) => {
  invocation.engine.report('high', `runs another program: ${invocation.name}`);
  return undefined;
};

export const wrapperRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['env', env],
  ['sudo', sudo], ['doas', sudo], ['pkexec', pkexec], ['su', su], ['runuser', su],
  ['xargs', xargs], ['parallel', parallel],
  ['nohup', wrapper({})],
  ['setsid', wrapper({})],
  ['builtin', wrapper({})],
  ['exec', execWrapper],
  ['command', command],
  ['time', time],
  ['timeout', wrapper({ valued: 'sk', valuedLong: ['--signal', '--kill-after'] }, 1)],
  ['nice', wrapper({ valued: 'n', valuedLong: ['--adjustment'] })],
  ['ionice', wrapper({ valued: 'cnpPu', valuedLong: ['--class', '--classdata', '--pid', '--pgid', '--uid'] }, 0, ['-p', '-P', '-u', '--pid', '--pgid', '--uid'])],
  ['stdbuf', wrapper({ valued: 'ioe', valuedLong: ['--input', '--output', '--error'] })],
  ['chrt', wrapper({ valued: 'TPD', valuedLong: ['--sched-runtime', '--sched-period', '--sched-deadline'] }, 1, ['-p', '--pid'])],
  ['taskset', wrapper({}, 1, ['-p', '--pid'])],
  ['watch', watch],
  ['flock', flock],
  ['unshare', privilegeChange({ valued: 'SGRw', valuedLong: ['--setuid', '--setgid', '--root', '--wd', '--map-user', '--map-group', '--propagation', '--setgroups', '--kill-child', '--map-users', '--map-groups'] })],
  ['nsenter', privilegeChange({ valued: 'tSGrw', valuedLong: ['--target', '--setuid', '--setgid', '--root', '--wd'] })],
  ['setpriv', privilegeChange({ valuedLong: ['--reuid', '--regid', '--groups', '--inh-caps', '--ambient-caps', '--bounding-set', '--securebits', '--pdeathsig', '--selinux-label', '--apparmor-profile', '--landlock-access', '--landlock-rule'] })],
  ['capsh', privilegeChange({}, true)],
  ['prlimit', wrapper({ valuedLong: ['--pid', '--output'] })],
  ['chroot', chroot],
  ['script', script],
  ['busybox', busybox],
]);
