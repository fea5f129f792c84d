import { isDangerousEnvName } from './dangerous-environment.js';

// What a terminal's persistent shell keeps from one line to the next that changes what a later line
// runs (CONTRACT §11, "Shell state"). The service keeps it itself, from the lines it judged and
// sent, and never asks the shell: a command can forge what the shell reports. Plain data, so it
// crosses to the analysis thread and back.

export interface ShellState {
  /** Alias name → its text; null when it cannot be known (set from an unknown value, or either of two). */
  aliases: Record<string, string | null>;
  /** Function name → its definition's source text; null when it cannot be known. */
  functions: Record<string, string | null>;
  /** Command name → the path bash remembers for it (`hash -p`, BASH_CMDS); null when it cannot be known. */
  hashed: Record<string, string | null>;
  /** Variables programs or the shell act on (see ACTING_VARIABLES), with their literal value or null. */
  variables: Record<string, string | null>;
  /** Names known to hold a literal integer: arithmetic may read them without running code. */
  integers: string[];
  /** Names declared integer (`declare -i`): every assignment to them is evaluated as arithmetic. */
  integerAttributes: string[];
  /** Names declared associative arrays (`declare -A`): their subscripts are strings, not arithmetic. */
  associative: string[];
  /** `set -k`: a NAME=value word anywhere on a line goes into the command's environment. */
  keywordAssignments: boolean;
  /** Traps that run between commands (DEBUG, RETURN, ERR): code that runs before any later line's. */
  traps: string[];
  /** Why the shell can no longer be followed (a sourced file, an eval of unknown text); null while it can. */
  unmodelled: string | null;
}

/** bash's own variables that always hold an integer (until a line assigns something else). */
const SHELL_INTEGERS = ['RANDOM', 'SRANDOM', 'SECONDS', 'LINENO', 'BASHPID', 'PPID', 'UID', 'EUID', 'EPOCHSECONDS', 'OPTIND', 'HISTCMD'];

export function initialShellState(): ShellState {
  return {
    aliases: {},
    functions: {},
    hashed: {},
    variables: {},
    integers: [...SHELL_INTEGERS],
    integerAttributes: [],
    associative: [],
    keywordAssignments: false,
    traps: [],
    unmodelled: null,
  };
}

/**
 * A new terminal's shell: what its `environment` (CONTRACT §3) set is there from the start, so a
 * GIT_PAGER given at creation is judged like one exported by a line.
 */
export function shellStateFor(environment: Readonly<Record<string, string>>): ShellState {
  const state = initialShellState();
  for (const [name, value] of Object.entries(environment)) {
    if (isActingVariable(name)) state.variables[name] = value;
    if (!/^-?[0-9]+$/.test(value)) state.integers = state.integers.filter((known) => known !== name);
    else if (!state.integers.includes(name)) state.integers.push(name);
  }
  return state;
}

/** The state after a line the service could not judge ran: nothing later can be judged through it. */
export function unfollowable(state: ShellState, reason: string): ShellState {
  return { ...cloneShellState(state), unmodelled: state.unmodelled ?? reason };
}

export function cloneShellState(state: ShellState): ShellState {
  return {
    aliases: { ...state.aliases },
    functions: { ...state.functions },
    hashed: { ...state.hashed },
    variables: { ...state.variables },
    integers: [...state.integers],
    integerAttributes: [...state.integerAttributes],
    associative: [...state.associative],
    keywordAssignments: state.keywordAssignments,
    traps: [...state.traps],
    unmodelled: state.unmodelled,
  };
}

/**
 * What several branches of a line (an `if`, a loop that may not run) leave behind: whatever any of
 * them may have done. A variable two branches set differently is unknown.
 */
export function mergeShellStates(states: readonly ShellState[]): ShellState {
  const [first, ...rest] = states;
  if (first === undefined) return initialShellState();
  const merged = cloneShellState(first);
  for (const state of rest) {
    mergeDefinitions(merged.aliases, state.aliases);
    mergeDefinitions(merged.functions, state.functions);
    mergeDefinitions(merged.hashed, state.hashed);
    mergeDefinitions(merged.variables, state.variables);
    merged.integers = merged.integers.filter((name) => state.integers.includes(name));
    merged.integerAttributes = [...new Set([...merged.integerAttributes, ...state.integerAttributes])];
    merged.associative = merged.associative.filter((name) => state.associative.includes(name));
    merged.keywordAssignments ||= state.keywordAssignments;
    merged.traps = [...new Set([...merged.traps, ...state.traps])];
    merged.unmodelled ??= state.unmodelled;
  }
  return merged;
}

/** Whatever either side defines is there afterwards; a name the two define differently is unknown. */
function mergeDefinitions(into: Record<string, string | null>, from: Readonly<Record<string, string | null>>): void {
  for (const [name, value] of Object.entries(from)) {
    into[name] = name in into && into[name] !== value ? null : value;
  }
}

/**
 * Variables a program or the shell acts on besides CONTRACT §4's dangerous names (which are
 * judged where they are assigned): the programs each one changes. `command` marks a variable whose
 * value is a command line the program runs (a pager, an editor): a later line is judged through
 * that command when its text is known. The others change what the program loads or does in ways
 * that cannot be judged here, so the program is high while one of them is set.
 */
const ACTING_VARIABLES: readonly { pattern: RegExp; programs: readonly string[]; command?: true }[] = [
  { pattern: /^(GIT_PAGER|GIT_EDITOR|GIT_SEQUENCE_EDITOR|GIT_EXTERNAL_DIFF|GIT_ASKPASS|GIT_SSH)$/, programs: ['git'], command: true },
  { pattern: /^(PAGER|MANPAGER)$/, programs: ['man', 'git', 'psql', 'mysql', 'journalctl', 'systemctl', 'less', 'more'], command: true },
  { pattern: /^(EDITOR|VISUAL|FCEDIT|SUDO_EDITOR)$/, programs: ['git', 'crontab', 'fc', 'less', 'more', 'sudoedit', 'visudo', 'vipw', 'mutt', 'psql', 'mysql', 'hg', 'svn'], command: true },
  { pattern: /^GIT_/, programs: ['git'] },
  { pattern: /^MANOPT$/, programs: ['man'] },
  { pattern: /^(LESSOPEN|LESSCLOSE|LESSKEYIN|LESSKEY)$/, programs: ['less', 'man', 'git', 'more'] },
  { pattern: /^(PYTHONPATH|PYTHONHOME|PYTHONINSPECT|PYTHONUSERBASE)$/, programs: ['python', 'python3', 'pip', 'pip3', 'pytest'] },
  { pattern: /^(PERL5LIB|PERLLIB|PERL5DB)$/, programs: ['perl', 'cpan', 'prove'] },
  { pattern: /^(RUBYLIB|GEM_HOME|GEM_PATH)$/, programs: ['ruby', 'gem', 'bundle', 'irb', 'rake'] },
  { pattern: /^(NODE_PATH)$/, programs: ['node', 'npm', 'npx', 'yarn', 'pnpm'] },
];

/** GIT_ names that only label what git records or quieten it: they change nothing git runs. */
const INERT_GIT_VARIABLES: ReadonlySet<string> = new Set([
  'GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_AUTHOR_DATE', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_COMMITTER_DATE',
  'GIT_TERMINAL_PROMPT', 'GIT_OPTIONAL_LOCKS', 'GIT_MERGE_AUTOEDIT', 'GIT_FLUSH', 'GIT_PROGRESS_DELAY', 'GIT_ADVICE',
]);

function actingEntry(name: string) {
  if (INERT_GIT_VARIABLES.has(name)) return undefined;
  return ACTING_VARIABLES.find(({ pattern }) => pattern.test(name));
}

/** Whether a variable is one the state keeps (it changes what some later program does). */
export function isActingVariable(name: string): boolean {
  return isDangerousEnvName(name) || actingEntry(name) !== undefined;
}

/** How a variable the state keeps reaches a program about to run. */
export type VariableUse =
  | { name: string; kind: 'command'; value: string | null }
  | { name: string; kind: 'changes' };

/**
 * The state's variables that change what `program` does, if it runs: those it reads, and CONTRACT
 * §4's dangerous names (LD_PRELOAD, PATH, …), which change what every program runs.
 */
export function variablesActingOn(state: ShellState, program: string): VariableUse[] {
  const uses: VariableUse[] = [];
  for (const [name, value] of Object.entries(state.variables)) {
    // The shell runs it after each line, whatever the line runs: judged with each line instead.
    if (name === 'PROMPT_COMMAND') continue;
    if (isDangerousEnvName(name)) {
      uses.push({ name, kind: 'changes' });
      continue;
    }
    const entry = actingEntry(name);
    if (entry === undefined || !entry.programs.includes(program)) continue;
    uses.push(entry.command === true ? { name, kind: 'command', value } : { name, kind: 'changes' });
  }
  return uses;
}

/** bash's builtins: a function or alias with one of these names changes what later lines mean. */
export const SHELL_BUILTINS: ReadonlySet<string> = new Set([
  'alias', 'bg', 'bind', 'break', 'builtin', 'caller', 'cd', 'command', 'compgen', 'complete', 'compopt', 'continue', 'declare', 'dirs',
  'disown', 'echo', 'enable', 'eval', 'exec', 'exit', 'export', 'false', 'fc', 'fg', 'getopts', 'hash', 'help', 'history', 'jobs', 'kill',
  'let', 'local', 'logout', 'mapfile', 'popd', 'printf', 'pushd', 'pwd', 'read', 'readarray', 'readonly', 'return', 'set', 'shift',
  'shopt', 'source', 'suspend', 'test', 'times', 'trap', 'true', 'type', 'typeset', 'ulimit', 'umask', 'unalias', 'unset', 'wait',
  '.', ':', '[',
]);

/** bash's reserved words: an alias or function of one of these names changes how lines parse. */
export const SHELL_KEYWORDS: ReadonlySet<string> = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'case', 'esac', 'for', 'select', 'while', 'until', 'do', 'done', 'in', 'function', 'time',
  '{', '}', '!', '[[', ']]', 'coproc',
]);
