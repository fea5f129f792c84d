import type { Engine, Scope } from './command-invocation.js';
import { ENV_NAME_PATTERN, isDangerousEnvName } from './dangerous-environment.js';
import type { WordValue } from './shell-words.js';

// Prompt strings are expanded before every prompt, so `PS1='$(cmd)'` runs cmd again and again.
const promptNames: ReadonlySet<string> = new Set(['PS0', 'PS1', 'PS2', 'PS3']);

/**
 * Checks one variable assignment, wherever it appears: a prefix or bare assignment, a
 * declaration, `env NAME=v`, `read NAME`, `printf -v NAME`, a `for NAME in` loop, `((NAME=…))`.
 * `value` is the assigned word when it is known (undefined when the command fills it in).
 */
export function checkAssignedName(engine: Engine, scope: Scope, name: string, value?: WordValue): void {
  const base = variableBase(name);
  if (base === null) {
    engine.report('high', `assigns a variable whose name cannot be resolved: ${name}`);
    return;
  }
  if (isDangerousEnvName(base)) engine.report('high', `dangerous environment variable: ${base}`);
  switch (base) {
    case 'HOME':
      // `~`, `cd` and $HOME now mean something the context does not know.
      scope.home = null;
      engine.report('high', 'changes how paths resolve: HOME');
      return;
    case 'CDPATH':
      scope.cdpath = true;
      engine.report('high', 'changes how paths resolve: CDPATH');
      return;
    case 'PWD':
    case 'OLDPWD':
      engine.report('high', `changes how paths resolve: ${base}`);
      return;
    case 'MAILPATH':
      // Each entry's `?message` is expanded when the shell checks for mail before a prompt.
      if (!isInertPrompt(value)) engine.report('high', 'mail check messages can run commands: MAILPATH');
      return;
    case 'HISTFILE':
      if (value === undefined || value.kind !== 'literal' || value.text !== '') engine.report('high', 'the shell writes its history there when it exits: HISTFILE');
      return;
    default:
      if (promptNames.has(base) && !isInertPrompt(value)) engine.report('high', `prompt string can run commands: ${base}`);
  }
}

/** The variable an assignment target names (`a[1]` → `a`), or null when it is not a plain name. */
export function variableBase(target: string): string | null {
  const bracket = target.indexOf('[');
  if (bracket < 0) return ENV_NAME_PATTERN.test(target) ? target : null;
  const base = target.slice(0, bracket);
  const subscript = target.slice(bracket);
  // bash evaluates an indexed subscript as arithmetic, where `$(…)` and backquotes run commands.
  if (!ENV_NAME_PATTERN.test(base) || !/^\[[A-Za-z0-9_@*+-]*\]$/.test(subscript)) return null;
  return base;
}

function isInertPrompt(value: WordValue | undefined): boolean {
  return value !== undefined && value.kind === 'literal' && !/[$`]/.test(value.text);
}

/** Text that a later arithmetic evaluation would run commands from (`let 'a[$(id)]=1'`). */
export function runsCodeInArithmetic(text: string): boolean {
  return text.includes('$(') || text.includes('`');
}
