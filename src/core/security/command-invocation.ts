import type { RiskLevel } from './risk-levels.js';
import { cloneShellState, type ShellState } from './shell-state.js';
import type { PathPolicy } from './path-scope.js';
import type { WordValue } from './shell-words.js';

/** One word of a command line as the rules see it. */
export interface Argument {
  /** As written, for reasons. */
  readonly text: string;
  readonly value: WordValue;
  /** A substitution inside the word fetches from the network (`"$(curl …)"`). */
  readonly remote: boolean;
}

/** What the shell would know at this point of the line. Copied for subshells and pipeline stages. */
export interface Scope {
  /** Real path of the current directory; null once it cannot be known (`cd "$x"`, `cd -`, `popd`). */
  cwd: string | null;
  /** Real path of what `~` means; null once the line assigned HOME. */
  home: string | null;
  /** CDPATH was assigned, so `cd name` may go anywhere. */
  cdpath: boolean;
  /** Functions whose bodies are being walked: a call to one of them is recursion. */
  readonly defining: readonly string[];
  /** Runs in a pipeline or in the background (a recursive call there is a fork bomb). */
  readonly concurrent: boolean;
  /**
   * The shell's state as this point of the line leaves it (CONTRACT §11): what earlier lines
   * defined, and what this line has changed so far. Each copy of the scope has its own.
   */
  state: ShellState;
}

export function copyScope(scope: Scope, changes: Partial<Scope> = {}): Scope {
  return { ...scope, state: cloneShellState(scope.state), ...changes };
}

/** Where a command's standard input comes from, for shells and interpreters that read code from it. */
export type StdinFeed =
  | { kind: 'terminal' }
  | { kind: 'pipe' }
  | { kind: 'script'; text: string }
  | { kind: 'dynamic'; remote: boolean }
  | { kind: 'file'; argument: Argument; remote: boolean };

/** Facts a pipeline needs about its stages. */
export interface Effects {
  /** Fetches data from the network (its output may be remote code). */
  network: boolean;
  /** Runs what arrives on standard input as code. */
  stdinCode: boolean;
  /** Decodes data (base64 -d, xxd -r, gunzip -c, …). */
  decoder: boolean;
}

export const noEffects: Effects = Object.freeze({ network: false, stdinCode: false, decoder: false });

export function mergeEffects(...all: readonly Effects[]): Effects {
  return {
    network: all.some((effects) => effects.network),
    stdinCode: all.some((effects) => effects.stdinCode),
    decoder: all.some((effects) => effects.decoder),
  };
}

/** The analyser as the command rules see it: reporting, path policy and recursion. */
export interface Engine {
  readonly restrictToWorkspaces: boolean;
  report(level: RiskLevel, reason: string): void;
  pathPolicy(scope: Scope): PathPolicy;
  /** Analyses `args` as a simple command (what a wrapper like `sudo` or `xargs` runs). */
  runCommand(args: readonly Argument[], scope: Scope, stdin: StdinFeed, trailingOperands: boolean): Effects;
  /** Parses and analyses code handed over as text (`bash -c`, `eval`, an alias body). */
  runScript(text: string, scope: Scope, stdin: StdinFeed): Effects;
}

/** One simple command after its name was resolved. */
export interface Invocation {
  /** The resolved name (`/bin/rm` → `rm`). */
  readonly name: string;
  readonly args: readonly Argument[];
  readonly scope: Scope;
  readonly stdin: StdinFeed;
  /** More operands arrive at run time (xargs, find -exec … +) that cannot be seen here. */
  readonly trailingOperands: boolean;
  readonly engine: Engine;
}

export type CommandRule = (invocation: Invocation) => Effects | undefined;
