import type { Argument, CommandRule, Effects, Invocation } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf, type OptionSyntax } from './command-options.js';
import { interactiveReason, runCodeArgument, runStdinProgram } from './code-strings.js';
import { checkRead, checkUnknownArguments, checkWrite } from './path-access.js';
import { literalValue } from './shell-words.js';
import { checkAssignedName } from './variable-assignments.js';

// Programs that run other programs (CONTRACT §11): each is judged by what it runs, or `high` when
// that cannot be known. Tracers and emulators run the command they are given; a few run a shell
// (or the user's choice of program) named in an option or read from a folder.

/** What follows the options is a command; none means an interactive shell, which reads the terminal. */
function runsCommand(invocation: Invocation, rest: readonly Argument[]): Effects | undefined {
  if (rest.length === 0) {
    invocation.engine.report('high', interactiveReason(invocation.name));
    return undefined;
  }
  return invocation.engine.runCommand(rest, invocation.scope, invocation.stdin, invocation.trailingOperands);
}

/** strace, ltrace: attaching to a running process, or running as another user, is beyond a command. */
function tracer(syntax: OptionSyntax): CommandRule {
  return (invocation) => {
    const { engine } = invocation;
    const parsed = parseOptions(invocation.args, { ...syntax, stopAtOperand: true });
    if (hasOption(parsed, '-p', '--attach')) engine.report('high', `attaches to a running process: ${invocation.name} -p`);
    if (hasOption(parsed, '-u', '--user')) engine.report('high', `runs as another user: ${invocation.name} -u`);
    for (const output of optionValues(parsed, '-o', '--output')) checkWrite(invocation, output);
    for (const assignment of optionValues(parsed, '-E', '--env')) {
      const name = textOf(assignment)?.split('=')[0];
      if (name === undefined) engine.report('high', `assigns a variable whose name cannot be resolved: ${assignment.text}`);
      else checkAssignedName(engine, invocation.scope, name);
    }
    const rest = invocation.args.slice(parsed.rest);
    if (rest.length === 0 && hasOption(parsed, '-p', '--attach')) return undefined;
    return runsCommand(invocation, rest);
  };
}

/** setarch ARCH [options] [program …]; linux32, i386 … are setarch with the architecture in the name. */
const setarch: CommandRule = (invocation) => {
  const archInName = invocation.name !== 'setarch';
  const args = archInName ? invocation.args : invocation.args.slice(1);
  const parsed = parseOptions(args, { stopAtOperand: true });
  return runsCommand(invocation, args.slice(parsed.rest));
};

const valgrind: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { stopAtOperand: true });
  for (const option of invocation.args.slice(0, parsed.rest)) {
    const text = textOf(option) ?? '';
    if (/^--(log|xml)-file=/.test(text)) checkWrite(invocation, { ...option, value: literalValue(text.slice(text.indexOf('=') + 1)) });
    // Loading a suppression or a tool from a file runs nothing, but reads it.
    if (/^--suppressions=/.test(text)) checkRead(invocation, { ...option, value: literalValue(text.slice(text.indexOf('=') + 1)) });
  }
  return runsCommand(invocation, invocation.args.slice(parsed.rest));
};

/** fakeroot pretends to be root for what it runs; `-l` loads a library of the caller's choice. */
const fakeroot: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'lsib', valuedLong: ['--lib', '--faked'], stopAtOperand: true });
  if (hasOption(parsed, '-l', '--lib', '--faked')) invocation.engine.report('high', `loads a library or program of the caller's choosing: ${invocation.name}`);
  for (const saved of optionValues(parsed, '-s')) checkWrite(invocation, saved);
  for (const loaded of optionValues(parsed, '-i')) checkRead(invocation, loaded);
  let rest = invocation.args.slice(parsed.rest);
  if (textOf(rest[0]) === '--') rest = rest.slice(1);
  return runsCommand(invocation, rest);
};

/** sg GROUP [-c] COMMAND: a shell command line, run with another group's rights. */
const sg: CommandRule = (invocation) => {
  const { engine } = invocation;
  engine.report('high', `runs as another group: ${invocation.name}`);
  const args = invocation.args.filter((argument) => textOf(argument) !== '-');
  const [, maybeOption, ...rest] = args;
  const code = textOf(maybeOption) === '-c' ? rest[0] : maybeOption;
  if (code === undefined) {
    engine.report('high', interactiveReason(invocation.name));
    return undefined;
  }
  return runCodeArgument(invocation, code, `${invocation.name} -c`);
};

/** ssh-agent [options] [command …]: runs its command; without one it prints the agent's variables. */
const sshAgent: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'aEOPt', stopAtOperand: true });
  for (const socket of optionValues(parsed, '-a')) checkWrite(invocation, socket);
  const rest = invocation.args.slice(parsed.rest);
  if (rest.length === 0) {
    invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
    return undefined;
  }
  return invocation.engine.runCommand(rest, invocation.scope, invocation.stdin, invocation.trailingOperands);
};

/** run-parts runs every program in a folder: nobody can say here what they are. */
const runParts: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valuedLong: ['--umask', '--arg', '--regex'] });
  for (const folder of parsed.operands) checkRead(invocation, folder);
  if (hasOption(parsed, '--test', '--list')) invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  else invocation.engine.report('high', `runs every program in a folder: ${invocation.name}`);
  return undefined;
};

/** man pipes pages through the pager it is told to use, which is a shell command line. */
const man: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, {
    valued: 'CMPSstemLRH', attached: 'H', valuedLong: ['--config-file', '--manpath', '--pager', '--sections', '--systems', '--extension', '--locale', '--recode', '--html'],
  });
  const pagers = optionValues(parsed, '-P', '--pager');
  for (const pager of pagers) runCodeArgument(invocation, pager, `${invocation.name} -P`);
  if (hasOption(parsed, '-H', '--html')) invocation.engine.report('high', `runs another program: ${invocation.name} --html`);
  for (const config of optionValues(parsed, '-C', '--config-file')) checkRead(invocation, config);
  // CONTRACT §11 lists man among the programs that run commands: its pager takes keystrokes,
  // which are not judged. Only the lookups that print and end (-k, -f, -w) are not interactive.
  const lookup = hasOption(parsed, '-k', '--apropos', '-f', '--whatis', '-w', '--where', '--path', '-W', '--where-cat');
  if (pagers.length === 0 && !lookup) invocation.engine.report('high', `opens a pager that takes commands typed into it: ${invocation.name}`);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/**
 * make runs the recipes of its makefile, which is medium like any build (CONTRACT §4); but
 * `--eval` is makefile text given on the line, where `$(shell …)` runs anything, and `-f -` reads
 * the makefile from standard input.
 */
const make: CommandRule = (invocation) => {
  const { engine } = invocation;
  const parsed = parseOptions(invocation.args, {
    valued: 'CfIjloW', valuedLong: ['--directory', '--file', '--makefile', '--include-dir', '--jobs', '--load-average', '--old-file', '--what-if', '--eval', '--assume-old', '--assume-new', '--new-file'],
  });
  if (optionValues(parsed, '--eval').length > 0 || invocation.args.some((argument) => (textOf(argument) ?? '').startsWith('--eval='))) {
    engine.report('high', `runs makefile text given on the line: ${invocation.name} --eval`);
  }
  let effects: Effects | undefined;
  for (const file of optionValues(parsed, '-f', '--file', '--makefile')) {
    if (textOf(file) === '-') effects = runStdinProgram(invocation, `${invocation.name} -f -`, false);
    else checkRead(invocation, file);
  }
  engine.report('medium', `not a known read-only command: ${invocation.name}`);
  checkUnknownArguments(invocation, parsed.operands.filter((operand) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(textOf(operand) ?? '')));
  return effects;
};

/** Runs a package's program, downloading it when missing: what runs cannot be known here. */
const packageRunner: CommandRule = (invocation) => {
  invocation.engine.report('high', `runs a package's program, fetched if missing: ${invocation.name}`);
  return undefined;
};

export const programRunnerRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['strace', tracer({ valued: 'abeEIoOpPsSuUX', valuedLong: ['--attach', '--output', '--user', '--env', '--trace', '--signal', '--string-limit'] })],
  ['ltrace', tracer({ valued: 'aAeEFLlnopsSuuwx', valuedLong: ['--output', '--library', '--config', '--indent', '--align'] })],
  ['setarch', setarch],
  ...['linux32', 'linux64', 'i386', 'x86_64', 'uname26'].map((name): [string, CommandRule] => [name, setarch]),
  ['valgrind', valgrind],
  ['fakeroot', fakeroot],
  ['sg', sg],
  ['ssh-agent', sshAgent],
  ['run-parts', runParts],
  ['man', man],
  ['make', make], ['gmake', make],
  ['npx', packageRunner], ['bunx', packageRunner], ['uvx', packageRunner], ['pnpx', packageRunner],
]);

/** `npm exec`, `pnpm dlx`, `yarn dlx`, `pipx run`, … inside a package manager's own command line. */
export function packageRunnerVerb(manager: string, verb: string | null): boolean {
  if (verb === null) return false;
  const verbs: Readonly<Record<string, readonly string[]>> = {
    npm: ['exec', 'x'], pnpm: ['dlx', 'exec'], yarn: ['dlx', 'exec'], bun: ['x'], pipx: ['run'], uv: ['run', 'tool'],
  };
  return verbs[manager]?.includes(verb) ?? false;
}

