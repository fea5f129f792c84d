import type { CommandRule, Invocation } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf } from './command-options.js';
import { reportHiddenCode, runCodeArgument } from './code-strings.js';
import { checkRead } from './path-access.js';
import { checkAssignedName, variableBase } from './variable-assignments.js';
import { isActingVariable } from './shell-state.js';
import { checkNamedVariable } from './expansion-walk.js';
import { defineAlias, forget, recordNamedValue, recordSetOptions, recordShoptOptions, recordTrap, rememberPath, stopFollowing } from './state-changes.js';


/**
 * cd moves the scope's cwd so later paths of the line resolve where the shell will be: the
 * target's real path (symlinks followed), or unknown for `cd -`, `cd "$x"` or with CDPATH set.
 */
const cd: CommandRule = (invocation) => {
  const { engine, scope } = invocation;
  const parsed = parseOptions(invocation.args);
  const [target] = parsed.operands;
  if (target === undefined) {
    if (scope.home === null) {
      scope.cwd = null;
      return undefined;
    }
    const home = { text: '~', value: { kind: 'literal', text: scope.home, glob: -1, brace: false } as const, remote: false };
    return cd({ ...invocation, args: [home] });
  }
  const text = textOf(target);
  if (text === '-' || (scope.cdpath && text !== null && !/^\.{0,2}\//.test(text))) {
    engine.report('medium', `changes to a directory not known here: ${target.text}`);
    scope.cwd = null;
    return undefined;
  }
  const found = checkRead(invocation, target);
  scope.cwd = found.kind === 'path' && !found.pattern ? found.located.real : null;
  engine.report('low', 'read-only inspection');
  return undefined;
};

const directoryStack: CommandRule = (invocation) => {
  for (const operand of parseOptions(invocation.args).operands) {
    if (!/^[+-]\d+$/.test(textOf(operand) ?? '')) checkRead(invocation, operand);
  }
  invocation.scope.cwd = null;
  invocation.engine.report('medium', `changes to a directory not known here: ${invocation.name}`);
  return undefined;
};

function assignsNames(invocation: Invocation, names: readonly (string | null)[]): void {
  for (const name of names) {
    if (name === null) {
      invocation.engine.report('high', `assigns a variable whose name cannot be resolved: ${invocation.name}`);
      stopFollowing(invocation.engine, invocation.scope, `${invocation.name} into a variable whose name cannot be known`);
      continue;
    }
    checkAssignedName(invocation.engine, invocation.scope, name);
    // CONTRACT §11: setting a variable the state keeps is at least medium, however it is set.
    const base = variableBase(name);
    if (base !== null && isActingVariable(base)) invocation.engine.report('medium', `sets a shell variable: ${base}`);
    // Filled in at run time: the value is not known here, which later lines are judged through.
    recordNamedValue(invocation.engine, invocation.scope, name, null);
  }
}

/**
 * Text typed at the terminal into the shell's own variables: bash evaluates a variable's value
 * as code in arithmetic, array subscripts, `${!name}`, `${x@P}` and `[[ -v ]]`, so the keystrokes
 * could run commands that were never analysed.
 */
function readsTypedValues(invocation: Parameters<CommandRule>[0]): void {
  if (invocation.stdin.kind === 'terminal') {
    invocation.engine.report('high', `reads typed text into the shell, where it can run as code: ${invocation.name}`);
  }
}

const read: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'adinNptu' });
  assignsNames(invocation, [...parsed.operands, ...optionValues(parsed, '-a')].map(textOf));
  // With line editing, keys typed into it run shell code (readline's shell-expand-line, edit-and-execute).
  if (hasOption(parsed, '-e')) invocation.engine.report('high', `runs commands typed into it, which are not analysed: ${invocation.name} -e`);
  readsTypedValues(invocation);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

const mapfile: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'dnOsuCc' });
  assignsNames(invocation, parsed.operands.map(textOf));
  // The callback is code of its own, and it also gets each line as an argument: `-C eval` runs
  // what was read, which nobody analysed.
  for (const callback of optionValues(parsed, '-C')) {
    invocation.engine.report('high', `runs code on each line it reads: ${invocation.name} -C`);
    runCodeArgument(invocation, callback, `${invocation.name} -C`);
  }
  readsTypedValues(invocation);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

const printf: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args.slice(0, 2), { valued: 'v' });
  assignsNames(invocation, optionValues(parsed, '-v').map(textOf));
  invocation.engine.report('low', 'read-only inspection');
  return undefined;
};

const getopts: CommandRule = (invocation) => {
  const name = invocation.args[1];
  if (name !== undefined) assignsNames(invocation, [textOf(name)]);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/** `export`/`declare`/… reached as a plain command (`builtin export X=1`, `command declare …`). */
const declare: CommandRule = (invocation) => {
  for (const argument of invocation.args) {
    const text = textOf(argument);
    if (text === null) assignsNames(invocation, [null]);
    else if (!text.startsWith('-') && text.includes('=')) assignsNames(invocation, [text.slice(0, text.indexOf('='))]);
  }
  invocation.engine.report('medium', `declares shell variables: ${invocation.name}`);
  return undefined;
};

/** An alias changes what later commands of this persistent shell run; its body is analysed now. */
const alias: CommandRule = (invocation) => {
  const { engine } = invocation;
  let defines = false;
  for (const argument of invocation.args) {
    const text = textOf(argument);
    if (text === null) {
      // Neither its name nor its text is known: no later line can be judged through it.
      stopFollowing(engine, invocation.scope, `an alias that cannot be resolved: ${argument.text}`);
      continue;
    }
    const equals = text.indexOf('=');
    if (equals < 0) continue;
    defines = true;
    defineAlias(engine, invocation.scope, text.slice(0, equals), text.slice(equals + 1));
  }
  if (!defines) engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/** A trap handler runs later, on a signal or at exit; it is high and its code is analysed now. */
const trap: CommandRule = (invocation) => {
  const { engine } = invocation;
  const args = invocation.args.filter((argument) => textOf(argument) !== '--');
  const [action, ...signals] = args;
  const actionText = textOf(action);
  if (action === undefined || signals.length === 0 || actionText === '' || actionText === '-' || /^-[lp]$/.test(actionText ?? '')) {
    if (actionText === '' || actionText === '-') recordTrap(invocation.scope, signals.map((signal) => textOf(signal) ?? ''), true);
    engine.report('medium', `not a known read-only command: ${invocation.name}`);
    return undefined;
  }
  engine.report('high', `sets a trap handler: ${signals.map((signal) => signal.text).join(' ')}`);
  recordTrap(invocation.scope, signals.map((signal) => textOf(signal) ?? 'DEBUG'), false);
  return runCodeArgument(invocation, action, invocation.name);
};

const enable: CommandRule = (invocation) => {
  invocation.engine.report('high', `changes shell builtins: ${invocation.name}`);
  const lists = invocation.args.every((argument) => /^-[aps]+$/.test(textOf(argument) ?? ''));
  if (!lists) stopFollowing(invocation.engine, invocation.scope, `${invocation.name} changes which builtins the shell has`);
  return undefined;
};

const hash: CommandRule = (invocation) => {
  const { engine, scope } = invocation;
  const parsed = parseOptions(invocation.args, { valued: 'pd' });
  const [path] = optionValues(parsed, '-p');
  if (path !== undefined) {
    engine.report('high', `changes what a command name runs: ${invocation.name} -p`);
    for (const name of parsed.operands) {
      const text = textOf(name);
      if (text === null) stopFollowing(engine, scope, `${invocation.name} -p of a name that cannot be known`);
      else rememberPath(engine, scope, text, textOf(path));
    }
    return undefined;
  }
  if (hasOption(parsed, '-r')) scope.state.hashed = {};
  for (const name of optionValues(parsed, '-d')) Reflect.deleteProperty(scope.state.hashed, textOf(name) ?? '');
  engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

const unalias: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args);
  if (hasOption(parsed, '-a')) invocation.scope.state.aliases = {};
  for (const name of parsed.operands) Reflect.deleteProperty(invocation.scope.state.aliases, textOf(name) ?? '');
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

const unset: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args);
  if (!hasOption(parsed, '-f')) for (const operand of parsed.operands) checkNamedVariable(invocation.engine, invocation.scope, textOf(operand), operand.text);
  const kind = hasOption(parsed, '-f') ? 'function' : hasOption(parsed, '-v') ? 'variable' : 'either';
  const names = parsed.operands.map(textOf);
  if (names.includes(null)) stopFollowing(invocation.engine, invocation.scope, `${invocation.name} of a name that cannot be known`);
  forget(invocation.scope, names.filter((name): name is string => name !== null), kind);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/**
 * test and [: read-only, but `-v NAME` evaluates an indexed subscript in NAME as arithmetic (and
 * bash 5.2 does so even for an unset array).
 */
const test: CommandRule = (invocation) => {
  const { args } = invocation;
  args.forEach((argument, index) => {
    const next = args[index + 1];
    if (textOf(argument) === '-v' && next !== undefined) checkNamedVariable(invocation.engine, invocation.scope, textOf(next), next.text);
  });
  invocation.engine.report('low', 'read-only inspection');
  return undefined;
};

/** shopt: the options it is not known to be harmless to change make later lines unreadable here. */
const shopt: CommandRule = (invocation) => {
  recordShoptOptions(invocation.engine, invocation.scope, invocation.args.map(textOf));
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/** Key bindings decide what the interactive shell does with the next keystrokes (`bind -x` runs code). */
const bind: CommandRule = (invocation) => {
  const lists = invocation.args.every((argument) => /^-[lpPsSvVX]+$/.test(textOf(argument) ?? ''));
  if (invocation.args.length > 0 && lists) invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  else invocation.engine.report('high', `changes key bindings: ${invocation.name}`);
  return undefined;
};

/** fc -s and fc -e re-run commands from the history, which this analysis cannot see. */
const fc: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'e' });
  if (hasOption(parsed, '-l')) invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  else reportHiddenCode(invocation, false, `${invocation.name} (history)`);
  return undefined;
};

/** The service turns history expansion off; turning it back on lets `!…` replay words this analysis never saw. */
const set: CommandRule = (invocation) => {
  const words = invocation.args.map(textOf);
  const histexpand = words.some((word, index) => /^-[A-Za-z]*H/.test(word ?? '') || (word === '-o' && words[index + 1] === 'histexpand'));
  if (histexpand) invocation.engine.report('high', `re-enables history expansion: ${invocation.name}`);
  else invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  recordSetOptions(invocation.engine, invocation.scope, words);
  return undefined;
};

export const shellBuiltinRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['cd', cd], ['pushd', directoryStack], ['popd', directoryStack],
  ['read', read], ['mapfile', mapfile], ['readarray', mapfile], ['printf', printf], ['getopts', getopts],
  ['export', declare], ['declare', declare], ['typeset', declare], ['local', declare], ['readonly', declare],
  ['alias', alias], ['trap', trap], ['enable', enable], ['hash', hash], ['bind', bind], ['fc', fc], ['set', set],
  ['unalias', unalias], ['unset', unset], ['shopt', shopt], ['test', test], ['[', test],
]);
