import type { Assign, Node } from 'mvdan-sh';
import { copyScope, type Engine, type Scope } from './command-invocation.js';
import { isKnownProgram } from './command-rules.js';
import { SHELL_BUILTINS, SHELL_KEYWORDS, isActingVariable } from './shell-state.js';
import { wordPart } from './shell-syntax.js';
import { wordValue } from './shell-words.js';

// How a line changes the shell's state for the lines after it (CONTRACT §11, "Shell state"):
// what it defines (aliases, functions, remembered paths), the variables programs act on, the
// integer variables arithmetic may read, options and traps. What cannot be followed (a sourced
// file, text evaluated that is not known here) marks the state unmodelled: every later line is
// then high, until the terminal is replaced.

interface TextSource {
  textOf(node: Node): string;
}

const LITERAL_INTEGER = /^-?(0[xX][0-9a-fA-F]+|[0-9]+)$/;

/** The state can no longer be followed: every later line of this terminal is high. */
export function stopFollowing(engine: Engine, scope: Scope, reason: string): void {
  engine.report('high', `changes the shell in a way later lines cannot be judged through: ${reason}`);
  scope.state.unmodelled ??= reason;
}

/**
 * A name an alias or a function may not take without confirmation: one named like a builtin or
 * keyword changes what every later line means (CONTRACT §11), the service's own `builtin printf`
 * included; one named like a known program changes what scripts and tools that call it run.
 */
export function checkDefinedName(engine: Engine, kind: 'alias' | 'function', name: string): void {
  if (SHELL_KEYWORDS.has(name)) engine.report('high', `${kind} named like a shell keyword: ${name}`);
  else if (SHELL_BUILTINS.has(name)) engine.report('high', `${kind} named like a shell builtin: ${name}`);
  else if (isKnownProgram(name)) engine.report('high', `${kind} shadows a command: ${name}`);
}

/**
 * An alias, by `alias` or BASH_ALIASES: medium, since later lines that use it are judged with its
 * text in place (CONTRACT §11); its text is judged here as well, so that a definition that could
 * only do harm is held at once.
 */
export function defineAlias(engine: Engine, scope: Scope, name: string, text: string | null): void {
  engine.report('medium', `defines an alias: ${name}`);
  checkDefinedName(engine, 'alias', name);
  if (text === null) engine.report('high', `defines an alias whose text cannot be known: ${name}`);
  else engine.runScript(text, copyScope(scope), { kind: 'terminal' });
  scope.state.aliases[name] = text;
}

export function defineFunction(scope: Scope, name: string, body: string): void {
  scope.state.functions[name] = body;
}

export function rememberPath(engine: Engine, scope: Scope, name: string, path: string | null): void {
  if (path === null) engine.report('high', `remembers a path that cannot be known for ${name}`);
  scope.state.hashed[name] = path;
}

/** `unset`, `unset -f`, `unset -v`: the names are gone from the state. */
export function forget(scope: Scope, names: readonly string[], kind: 'variable' | 'function' | 'either'): void {
  const { state } = scope;
  for (const name of names) {
    if (kind !== 'function') {
      Reflect.deleteProperty(state.variables, name);
      state.integers = state.integers.filter((known) => known !== name);
      state.integerAttributes = state.integerAttributes.filter((known) => known !== name);
      state.associative = state.associative.filter((known) => known !== name);
    }
    if (kind !== 'variable') Reflect.deleteProperty(state.functions, name);
  }
}

/** Records that a variable now holds `value` (a literal, or null when unknown). */
export function recordVariable(engine: Engine, scope: Scope, name: string, value: string | null, knownInteger = false): void {
  const { state } = scope;
  if (name === 'IFS') stopFollowing(engine, scope, 'IFS changes how every later line splits its words');
  if (isActingVariable(name)) state.variables[name] = value;
  const integer = knownInteger || (value !== null && LITERAL_INTEGER.test(value));
  state.integers = state.integers.filter((known) => known !== name);
  if (integer) state.integers.push(name);
  // `declare -i n` makes every later assignment to n an arithmetic evaluation.
  if (!integer && state.integerAttributes.includes(name)) {
    engine.report('high', `evaluates the value assigned to an integer variable as arithmetic: ${name}`);
  }
}

/**
 * An assignment that stays in the shell (a bare `NAME=value`, `export`, `declare`, …): BASH_ALIASES
 * and BASH_CMDS entries define aliases and remembered paths; other names are recorded.
 */
export function recordAssignment(engine: Engine, source: TextSource, scope: Scope, assign: Assign): void {
  const name = assign.Name?.Value;
  if (name === undefined) return;
  const value = assign.Value === null ? null : wordValue(assign.Value, scope);
  const literal = value?.kind === 'literal' ? value.text : null;
  if (name === 'BASH_ALIASES' || name === 'BASH_CMDS') {
    const key = assign.Index === null ? null : source.textOf(assign.Index);
    if (key === null || assign.Array !== null || !/^[^$`'"\\]+$/.test(key)) {
      stopFollowing(engine, scope, `${name} set in a way that cannot be followed`);
      return;
    }
    if (name === 'BASH_ALIASES') defineAlias(engine, scope, key, literal);
    else rememberPath(engine, scope, key, literal);
    return;
  }
  if (assign.Index !== null || assign.Array !== null) {
    // An array's elements are not tracked; it holds no known integer any more.
    scope.state.integers = scope.state.integers.filter((known) => known !== name);
    return;
  }
  // `i=$((i + 1))` gives i an integer, whatever the arithmetic read (that was judged where it is).
  const arithmetic = assign.Value !== null && assign.Value.Parts.length === 1 && assign.Value.Parts.every((part) => wordPart(part).kind === 'ArithmExp');
  recordVariable(engine, scope, name, assign.Value === null ? '' : literal, arithmetic);
}

/**
 * A value given to a name by a builtin rather than by an assignment (`printf -v`, `read`,
 * `mapfile`, `declare "NAME=value"`): `BASH_ALIASES[name]` and `BASH_CMDS[name]` define an alias
 * or a remembered path, an array element leaves no known integer, anything else is recorded.
 * `value` is null when the builtin fills it in at run time.
 */
export function recordNamedValue(engine: Engine, scope: Scope, target: string, value: string | null): void {
  const bracket = target.indexOf('[');
  if (bracket < 0) {
    recordVariable(engine, scope, target, value);
    return;
  }
  const base = target.slice(0, bracket);
  const key = target.slice(bracket + 1, target.endsWith(']') ? -1 : undefined);
  if (base === 'BASH_ALIASES' || base === 'BASH_CMDS') {
    if (!/^[^$`'"\\]+$/.test(key)) {
      stopFollowing(engine, scope, `${base} set in a way that cannot be followed`);
      return;
    }
    if (base === 'BASH_ALIASES') defineAlias(engine, scope, key, value);
    else rememberPath(engine, scope, key, value);
    return;
  }
  scope.state.integers = scope.state.integers.filter((known) => known !== base);
  if (scope.state.integerAttributes.includes(base) && (value === null || !LITERAL_INTEGER.test(value))) {
    engine.report('high', `evaluates the value assigned to an integer variable as arithmetic: ${base}`);
  }
}

/** `declare -i` / `-A` / `-n` give names attributes that change how later lines treat them. */
export function recordAttributes(engine: Engine, scope: Scope, flags: string, names: readonly string[]): void {
  const { state } = scope;
  if (flags.includes('i')) state.integerAttributes = [...new Set([...state.integerAttributes, ...names])];
  if (flags.includes('A')) state.associative = [...new Set([...state.associative, ...names])];
  if (flags.includes('n')) stopFollowing(engine, scope, `a name reference makes later assignments reach another variable: ${names.join(' ')}`);
}

/** set and shopt options that change how later lines are read or where they act. */
const HARMLESS_SET_LETTERS = new Set(['e', 'u', 'x', 'v', 'f', 'a', 'C', 'b', 'm', 'h', 'n', 'B', 'P']);
const HARMLESS_SET_OPTIONS = new Set([
  'errexit', 'nounset', 'xtrace', 'verbose', 'noglob', 'allexport', 'noclobber', 'notify', 'monitor', 'hashall', 'noexec',
  'braceexpand', 'physical', 'pipefail', 'ignoreeof', 'interactive-comments', 'errtrace',
]);
const HARMLESS_SHOPT = new Set([
  'extglob', 'globstar', 'nullglob', 'dotglob', 'nocaseglob', 'nocasematch', 'failglob', 'lastpipe', 'checkwinsize', 'histappend',
  'checkjobs', 'checkhash', 'globasciiranges', 'inherit_errexit', 'xpg_echo', 'huponexit', 'lithist', 'cmdhist', 'expand_aliases',
  'sourcepath', 'shift_verbose', 'patsub_replacement', 'assoc_expand_once', 'complete_fullquote', 'progcomp', 'promptvars', 'no_empty_cmd_completion',
]);

/** `set -k` / `set -o keyword` is followed; a set option not known to be harmless is not. */
export function recordSetOptions(engine: Engine, scope: Scope, words: readonly (string | null)[]): void {
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index];
    if (word === undefined) return;
    if (word === null) {
      stopFollowing(engine, scope, 'set with options that cannot be known');
      return;
    }
    if (word === '--' || word === '-') return;
    if (word === '-o' || word === '+o') {
      const option = words[index + 1];
      index += 1;
      if (option === undefined) return;
      if (option === 'keyword') scope.state.keywordAssignments = word === '-o';
      else if (option === null || !HARMLESS_SET_OPTIONS.has(option)) stopFollowing(engine, scope, `set ${word} ${option ?? '?'}`);
      continue;
    }
    if (!/^[-+][A-Za-z]+$/.test(word)) return;
    for (const letter of word.slice(1)) {
      if (letter === 'k') scope.state.keywordAssignments = word.startsWith('-');
      else if (letter !== 'o' && !HARMLESS_SET_LETTERS.has(letter)) stopFollowing(engine, scope, `set ${word[0] ?? ''}${letter}`);
    }
  }
}

export function recordShoptOptions(engine: Engine, scope: Scope, words: readonly (string | null)[]): void {
  const flags = words.filter((word) => word !== null && word.startsWith('-')).join('');
  const names = words.filter((word): word is string | null => word === null || !word.startsWith('-'));
  if (!/[su]/.test(flags)) return;
  if (flags.includes('o')) {
    recordSetOptions(engine, scope, names.flatMap((name) => [flags.includes('s') ? '-o' : '+o', name]));
    return;
  }
  for (const name of names) {
    if (name === null || !HARMLESS_SHOPT.has(name)) stopFollowing(engine, scope, `shopt ${flags} ${name ?? '?'}`);
  }
}

/** Traps on DEBUG, RETURN and ERR run between commands: the code of later lines' commands is not all there is. */
export function recordTrap(scope: Scope, signals: readonly string[], cleared: boolean): void {
  const between = signals.map((signal) => signal.toUpperCase().replace(/^SIG/, '')).filter((signal) => ['DEBUG', 'RETURN', 'ERR'].includes(signal));
  if (cleared) scope.state.traps = scope.state.traps.filter((signal) => !between.includes(signal));
  else scope.state.traps = [...new Set([...scope.state.traps, ...between])];
}
