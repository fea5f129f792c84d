import { copyScope, mergeEffects, noEffects, type Argument, type CommandRule, type Effects, type Invocation } from './command-invocation.js';
import { textOf } from './command-options.js';
import { checkRead, checkRemove, checkWrite } from './path-access.js';
import { currentDirectory } from './read-only-commands.js';
import { literalValue } from './shell-words.js';

const execActions: ReadonlySet<string> = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const writeActions: ReadonlySet<string> = new Set(['-fprint', '-fprint0', '-fls', '-fprintf']);
const readingTests: ReadonlySet<string> = new Set(['-newer', '-anewer', '-cnewer', '-samefile', '-files0-from']);
/** Tokens followed by one value that is not a path. */
const valuedTokens: ReadonlySet<string> = new Set([
  '-name', '-iname', '-path', '-ipath', '-wholename', '-iwholename', '-regex', '-iregex', '-type', '-xtype', '-perm', '-user',
  '-group', '-uid', '-gid', '-size', '-mtime', '-atime', '-ctime', '-mmin', '-amin', '-cmin', '-maxdepth', '-mindepth', '-links',
  '-inum', '-printf', '-fstype', '-used', '-lname', '-ilname', '-context', '-regextype', '-newerat', '-newerct', '-newermt',
]);
/** Tokens that do not narrow what the expression matches: with only these, the starting point itself is hit. */
const nonFiltering: ReadonlySet<string> = new Set([
  '-delete', '-print', '-print0', '-ls', '-depth', '-d', '-maxdepth', '-xdev', '-mount', '-follow', '-daystart', '-noleaf',
  '-ignore_readdir_race', '-noignore_readdir_race', '-warn', '-nowarn', '-regextype', '-true', '-printf', '-prune', '-quit',
  ...execActions, ...writeActions,
]);

interface FindExpression {
  starts: Argument[];
  /** The expression narrows matches, so a starting point is not necessarily hit itself. */
  filtered: boolean;
  deletes: boolean;
  commands: { args: Argument[]; batched: boolean }[];
  writes: Argument[];
  reads: Argument[];
}

function parseFind(args: readonly Argument[]): FindExpression {
  const found: FindExpression = { starts: [], filtered: false, deletes: false, commands: [], writes: [], reads: [] };
  let index = 0;
  while (index < args.length && /^-([HLP]|O\d*|D)$/.test(textOf(args[index]) ?? '')) index += textOf(args[index]) === '-D' ? 2 : 1;
  for (; index < args.length; index += 1) {
    const argument = args[index];
    const text = argument === undefined ? null : textOf(argument);
    if (argument === undefined || (text !== null && /^[-(!,)]/.test(text))) break;
    found.starts.push(argument);
  }
  for (; index < args.length; index += 1) {
    const token = textOf(args[index]) ?? '';
    if (!nonFiltering.has(token) && token !== '(' && token !== ')' && token !== ',') found.filtered = true;
    if (token === '-delete') found.deletes = true;
    if (execActions.has(token)) {
      const end = args.findIndex((candidate, at) => at > index && /^[;+]$/.test(textOf(candidate) ?? ''));
      const stop = end < 0 ? args.length : end;
      found.commands.push({ args: args.slice(index + 1, stop), batched: end >= 0 && textOf(args[end]) === '+' });
      index = stop;
    } else if (writeActions.has(token)) {
      const target = args[index + 1];
      if (target !== undefined) found.writes.push(target);
      index += token === '-fprintf' ? 2 : 1;
    } else if (readingTests.has(token)) {
      const target = args[index + 1];
      if (target !== undefined) found.reads.push(target);
      index += 1;
    } else if (valuedTokens.has(token)) {
      index += 1;
    }
  }
  if (found.starts.length === 0) found.starts.push(currentDirectory);
  return found;
}

/** What `{}` can stand for: the starting point itself, or (with a filtering expression) what lies below it. */
function matchesOf(start: Argument, filtered: boolean): Argument {
  if (!filtered || start.value.kind !== 'literal') return start;
  const text = `${start.value.text.replace(/\/+$/, '')}/*`;
  const glob = start.value.glob >= 0 ? start.value.glob : text.length - 1;
  return { text: `${start.text}/*`, value: literalValue(text, glob), remote: start.remote };
}

/**
 * find: low while it only lists. `-exec`/`-ok` run another program (high) and that program is
 * analysed with `{}` standing for what find can hand it; `-delete` is high and, like rm, critical
 * when a starting point it would remove is protected; `-fprint` and friends write files.
 */
const find: CommandRule = (invocation: Invocation): Effects | undefined => {
  const { engine, name } = invocation;
  const expression = parseFind(invocation.args);
  for (const start of expression.starts) checkRead(invocation, start);
  for (const target of expression.reads) checkRead(invocation, target);
  for (const target of expression.writes) checkWrite(invocation, target);
  if (expression.deletes) {
    engine.report('high', `deletes files: ${name} -delete`);
    for (const start of expression.starts) checkRemove(invocation, matchesOf(start, expression.filtered));
  }
  const effects: Effects[] = [];
  for (const command of expression.commands) {
    engine.report('high', `runs another program: ${name} -exec`);
    for (const start of expression.starts) {
      const match = matchesOf(start, expression.filtered);
      const args = command.args.map((argument) => (textOf(argument)?.includes('{}') === true ? match : argument));
      effects.push(engine.runCommand(args, copyScope(invocation.scope), { kind: 'terminal' }, command.batched));
    }
  }
  if (!expression.deletes && expression.commands.length === 0 && expression.writes.length === 0) engine.report('low', 'read-only inspection');
  return effects.length === 0 ? noEffects : mergeEffects(...effects);
};

export const findRules: ReadonlyMap<string, CommandRule> = new Map([['find', find]]);
