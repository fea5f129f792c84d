import type { Argument, Engine, Invocation, Scope } from './command-invocation.js';
import { expandBraces } from './brace-expansion.js';
import { literalValue } from './shell-words.js';
import {
  absolutePath, isInheritedDescriptor, locatePath, patternDirectory, protectedByRemoval, protectedByRemovingEntries,
  type LocatedPath, type Protected,
} from './path-scope.js';

/**
 * Where an argument points: a located path, a stream (a process substitution, or `-` for
 * stdin/stdout, which is what nearly every tool takes it to mean), or nothing knowable.
 */
export type ArgumentTarget =
  | { kind: 'path'; located: LocatedPath; pattern: boolean }
  | { kind: 'stream' }
  | { kind: 'unknown' };

type Site = Pick<Invocation, 'engine' | 'scope'>;

/**
 * The words an argument with a brace expansion becomes (`{/,src}` → `/`, `src`), each judged on
 * its own; null when it has none. Too many to judge is unknown, so high.
 */
function braceWords(site: Site, argument: Argument): Argument[] | null {
  const { value } = argument;
  if (value.kind !== 'literal' || !value.brace) return null;
  const words = expandBraces(value.text);
  if (words === null) {
    site.engine.report('high', `brace expansion too large to judge: ${argument.text}`);
    return [];
  }
  return words.flatMap((word) => {
    // Tilde expansion comes after brace expansion: `{~,x}` names the home directory.
    const tilde = /^~(\/|$)/.test(word);
    if (tilde && site.scope.home === null) {
      site.engine.report('high', `path cannot be resolved statically: ${argument.text}`);
      return [];
    }
    const text = tilde && site.scope.home !== null ? `${site.scope.home}${word.slice(1)}` : word;
    const glob = text.search(/[*?[]/);
    return [{ text: tilde ? word : text, value: literalValue(text, glob), remote: argument.remote }];
  });
}

/** Runs a check on each word a brace expansion makes, or on the argument itself. */
function eachWord(site: Site, argument: Argument, check: (word: Argument) => ArgumentTarget): ArgumentTarget {
  const words = braceWords(site, argument);
  if (words === null) return check(argument);
  let last: ArgumentTarget = { kind: 'unknown' };
  for (const word of words) last = check(word);
  return last;
}

/** Locates an argument; for a pattern, the directory its matches live in. */
export function targetOf(engine: Engine, scope: Scope, argument: Argument): ArgumentTarget {
  const { value } = argument;
  if (value.kind === 'process' || (value.kind === 'literal' && value.text === '-')) return { kind: 'stream' };
  if (value.kind === 'dynamic') return { kind: 'unknown' };
  const pattern = value.glob >= 0;
  const absolute = absolutePath(pattern ? patternDirectory(value.text, value.glob) : value.text, scope.cwd);
  if (absolute === null) return { kind: 'unknown' };
  return { kind: 'path', located: locatePath(absolute, engine.pathPolicy(scope)), pattern };
}

/** Reading a path: outside the workspaces is high (with the restriction on), unknown is always high. */
export function checkRead(site: Site, argument: Argument): ArgumentTarget {
  const words = braceWords(site, argument);
  if (words !== null) return eachWord(site, argument, (word) => checkRead(site, word));
  const { engine } = site;
  const target = targetOf(engine, site.scope, argument);
  if (target.kind === 'unknown') engine.report('high', `path cannot be resolved statically: ${argument.text}`);
  if (target.kind !== 'path') return target;
  const { zone, blockDevice } = target.located;
  if (zone === 'network') engine.report('high', `opens a network connection: ${argument.text}`);
  else if (blockDevice) engine.report('high', `reads a block device: ${argument.text}`);
  else if ((zone === 'outside' || zone === 'device') && engine.restrictToWorkspaces) {
    engine.report('high', `reads outside the workspaces: ${argument.text}`);
  }
  return target;
}

/** Writing a path: outside the workspaces is critical (with the restriction on), block devices always. */
export function checkWrite(site: Site, argument: Argument): ArgumentTarget {
  if (argument.value.kind === 'literal' && argument.value.brace) return eachWord(site, argument, (word) => checkWrite(site, word));
  const { engine } = site;
  const target = targetOf(engine, site.scope, argument);
  if (target.kind === 'unknown') engine.report('high', `writes to a path that cannot be resolved: ${argument.text}`);
  if (target.kind !== 'path') return target;
  reportWrite(engine, target.located, argument.text, 'writes');
  return target;
}

/** A repository's own configuration, hooks and redirections, wherever the repository lies. */
const GIT_METADATA = /(^|\/)\.git(\/(config|config\.worktree|commondir|hooks|info|modules|worktrees)(\/|$)|$)/;

function reportWrite(engine: Engine, located: LocatedPath, text: string, verb: 'writes' | 'deletes'): void {
  // A nested repository's .git is not bound read-only (only the workspace's own is): writing its
  // configuration plants what Git runs, as `git config core.fsmonitor …` would.
  if (GIT_METADATA.test(located.real)) engine.report('high', `changes what Git reads or runs: ${text}`);
  switch (located.zone) {
    case 'inside':
      engine.report('medium', `${verb === 'writes' ? 'changes' : 'deletes'} inside the workspaces: ${text}`);
      return;
    case 'tmp':
      engine.report('medium', `${verb} under /tmp: ${text}`);
      return;
    case 'special':
      if (isInheritedDescriptor(located.real)) engine.report('high', `${verb} an inherited descriptor: ${text}`);
      else engine.report('medium', `${verb} a special file: ${text}`);
      return;
    case 'network':
      engine.report('high', `opens a network connection: ${text}`);
      return;
    case 'device':
      if (located.blockDevice) engine.report('critical', `writes to a block device: ${text}`);
      else if (engine.restrictToWorkspaces) engine.report('critical', `${verb} outside the workspaces: ${text}`);
      else engine.report('high', `${verb} a device: ${text}`);
      return;
    case 'outside':
      if (engine.restrictToWorkspaces) engine.report('critical', `${verb} outside the workspaces: ${text}`);
      else engine.report('medium', `${verb} outside the workspaces (restriction off): ${text}`);
      return;
  }
}

const protectedReasons: Record<Protected, string> = {
  root: 'removes the root directory',
  home: 'removes the home directory or a parent of it',
  workspace: 'removes a workspace root or a parent of one',
};

/**
 * Removing a path (rm, rmdir, mv's sources, find -delete, shred). `/`, home, a workspace root or a
 * parent of one is critical whatever the restriction setting; a pattern is judged by what its
 * matches could be, so `rm -rf /*` and `rm -rf ../*` at a workspace root are critical too.
 */
export function checkRemove(site: Site, argument: Argument): ArgumentTarget {
  if (argument.value.kind === 'literal' && argument.value.brace) return eachWord(site, argument, (word) => checkRemove(site, word));
  const { engine } = site;
  const target = targetOf(engine, site.scope, argument);
  if (target.kind === 'unknown') engine.report('high', `deletes a path that cannot be resolved: ${argument.text}`);
  if (target.kind !== 'path') return target;
  const policy = engine.pathPolicy(site.scope);
  const hit = target.pattern
    ? protectedByRemovingEntries(target.located.real, policy)
    : protectedByRemoval(target.located.real, policy);
  if (hit !== null) engine.report('critical', `${protectedReasons[hit]}: ${argument.text}`);
  reportWrite(engine, target.located, argument.text, 'deletes');
  return target;
}

/** An argument of an unknown command that looks like a path (`/x`, `~/x`, `../x`, `--opt=/x`). */
export function looksLikePath(argument: Argument): Argument | null {
  const { value } = argument;
  if (value.kind !== 'literal') return null;
  const { text } = value;
  if (text.startsWith('/') || text === '..' || text.startsWith('../')) return argument;
  if (text.startsWith('--')) {
    const equals = text.indexOf('=');
    const rest = equals < 0 ? '' : text.slice(equals + 1);
    if (rest.startsWith('/') || rest === '..' || rest.startsWith('../')) {
      return { text: rest, value: { ...value, text: rest, glob: value.glob > equals ? value.glob - equals - 1 : -1 }, remote: argument.remote };
    }
  }
  return null;
}

/** Arguments of a command whose syntax is not known: path-like ones are read, unknowable ones are high. */
export function checkUnknownArguments(site: Pick<Invocation, 'engine' | 'scope'>, args: readonly Argument[]): void {
  for (const argument of args) {
    if (argument.value.kind === 'dynamic') {
      site.engine.report('high', `argument cannot be resolved statically: ${argument.text}`);
      continue;
    }
    const path = looksLikePath(argument);
    if (path !== null) checkRead(site, path);
  }
}
