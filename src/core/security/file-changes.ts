import { statSync } from 'node:fs';
import { posix } from 'node:path';
import type { Argument, CommandRule, Invocation } from './command-invocation.js';
import { absolutePath, locatePath } from './path-scope.js';
import { hasOption, optionValues, parseOptions, subArgument, textOf, type OptionSyntax, type ParsedCommand } from './command-options.js';
import { literalValue } from './shell-words.js';
import { checkRead, checkRemove, checkWrite } from './path-access.js';
import { currentDirectory } from './read-only-commands.js';

const rm: CommandRule = (invocation) => {
  const { engine } = invocation;
  const parsed = parseOptions(invocation.args);
  const recursive = hasOption(parsed, '-r', '-R', '--recursive');
  for (const operand of parsed.operands) {
    checkRemove(invocation, operand);
    if (recursive) engine.report('high', `recursive delete: ${operand.text}`);
    if (operand.value.kind === 'literal' && operand.value.glob >= 0) engine.report('high', `wildcard delete: ${operand.text}`);
  }
  if (invocation.trailingOperands) engine.report('high', `deletes paths that arrive at run time: ${invocation.name}`);
  if (recursive && parsed.operands.length === 0) engine.report('high', `recursive delete: ${invocation.name}`);
  if (parsed.operands.length === 0) engine.report('medium', `deletes files: ${invocation.name}`);
  return undefined;
};

const removeEach: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args);
  for (const operand of parsed.operands) checkRemove(invocation, operand);
  invocation.engine.report('medium', `deletes files: ${invocation.name}`);
  return undefined;
};

/** The destination of cp/mv/ln/install: `-t DIR`, or the last operand. */
function splitDestination(parsed: ParsedCommand): { sources: readonly Argument[]; destination: Argument | null } {
  const [target] = optionValues(parsed, '-t', '--target-directory');
  if (target !== undefined) return { sources: parsed.operands, destination: target };
  if (parsed.operands.length < 2) return { sources: parsed.operands, destination: null };
  return { sources: parsed.operands.slice(0, -1), destination: parsed.operands.at(-1) ?? null };
}

const copySyntax: OptionSyntax = { valued: 'tS', valuedLong: ['--target-directory', '--suffix', '--backup', '--reflink', '--sparse', '--preserve'] };

/** mv takes its sources away (moving a workspace root is removing it) and writes the destination. */
function transfer(verb: 'copies' | 'moves'): CommandRule {
  return (invocation) => {
    const parsed = parseOptions(invocation.args, copySyntax);
    const { sources, destination } = splitDestination(parsed);
    for (const source of sources) {
      if (verb === 'moves') checkRemove(invocation, source);
      else checkRead(invocation, source);
    }
    checkWrite(invocation, destination ?? currentDirectory);
    invocation.engine.report('medium', `${verb} files: ${invocation.name}`);
    return undefined;
  };
}

const ln: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, copySyntax);
  const { sources, destination } = splitDestination(parsed);
  const symbolic = hasOption(parsed, '-s', '--symbolic');
  // A hard link's source is read through the link later; a symbolic link's target is text, which
  // resolves where the link lies (CONTRACT §11: a symlink out of the workspaces is high).
  for (const source of sources) {
    if (symbolic) checkLinkTarget(invocation, source, destination, sources.length > 1 || parsed.operands.length === 1);
    else checkRead(invocation, source);
  }
  checkWrite(invocation, destination ?? currentDirectory);
  invocation.engine.report('medium', `creates links: ${invocation.name}`);
  return undefined;
};

/**
 * Where a symbolic link made now will lead: its target text taken relative to the folder the link
 * lies in (the destination itself when it is a folder, or the cwd when none is given). A link that
 * leads out of the workspaces (the private /tmp aside) lets later lines judged as "inside" reach
 * outside; a target that cannot be known is judged the same.
 */
function checkLinkTarget(invocation: Invocation, target: Argument, destination: Argument | null, intoFolder: boolean): void {
  const { engine, scope } = invocation;
  const text = textOf(target);
  const destinationText = destination === null ? null : textOf(destination);
  if (text === null || (destination !== null && destinationText === null)) {
    engine.report('high', `creates a symbolic link that cannot be resolved: ${target.text}`);
    return;
  }
  const linkAt = destinationText ?? '.';
  const policy = engine.pathPolicy(scope);
  const linkPath = absolutePath(linkAt, scope.cwd);
  if (linkPath === null) {
    engine.report('high', `creates a symbolic link that cannot be resolved: ${target.text}`);
    return;
  }
  const isFolder = intoFolder || linkAt.endsWith('/') || destination === null || isExistingFolder(policy.resolve(linkPath));
  const folder = isFolder ? linkPath : posix.dirname(linkPath);
  const leadsTo = text.startsWith('/') ? text : posix.join(folder, text);
  const { zone } = locatePath(leadsTo, policy);
  if (engine.restrictToWorkspaces && (zone === 'outside' || zone === 'device' || zone === 'network')) {
    engine.report('high', `creates a symbolic link out of the workspaces: ${target.text}`);
  }
}

function isExistingFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const install: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'tSmogZ', valuedLong: ['--target-directory', '--suffix', '--mode', '--owner', '--group', '--context'] });
  if (hasOption(parsed, '-d', '--directory')) {
    for (const operand of parsed.operands) checkWrite(invocation, operand);
  } else {
    const { sources, destination } = splitDestination(parsed);
    for (const source of sources) checkRead(invocation, source);
    if (destination !== null) checkWrite(invocation, destination);
  }
  invocation.engine.report('medium', `installs files: ${invocation.name}`);
  return undefined;
};

function writesOperands(syntax: OptionSyntax, readOptions: readonly string[] = []): CommandRule {
  return (invocation) => {
    const parsed = parseOptions(invocation.args, syntax);
    for (const value of optionValues(parsed, ...readOptions)) checkRead(invocation, value);
    for (const operand of parsed.operands) checkWrite(invocation, operand);
    invocation.engine.report('medium', `writes files: ${invocation.name}`);
    return undefined;
  };
}


/**
 * chmod/chown/chgrp: the first operand is the mode or owner unless `--reference` gives it. chmod
 * modes may look like options (`chmod -x file`), so only the known flags count as options.
 */
function changesPermissions(invocation: Invocation): void {
  const { engine, name } = invocation;
  const operands: Argument[] = [];
  let recursive = false;
  let reference = false;
  for (const argument of invocation.args) {
    const text = textOf(argument);
    if (text !== null && (/^-[RcfvhHLP]+$/.test(text) || /^--(recursive|changes|silent|quiet|verbose|dereference|no-dereference|preserve-root|no-preserve-root|from=.*)$/.test(text))) {
      recursive ||= text.includes('R') || text === '--recursive';
    } else if (text?.startsWith('--reference=') === true) {
      reference = true;
      checkRead(invocation, subArgument(argument, '--reference='.length));
    } else {
      operands.push(argument);
    }
  }
  if (recursive) engine.report('high', `recursive permission change: ${name} -R`);
  for (const target of reference ? operands : operands.slice(1)) checkWrite(invocation, target);
  engine.report('medium', `changes permissions: ${name}`);
}

const permissions: CommandRule = (invocation) => {
  changesPermissions(invocation);
  return undefined;
};

const truncate: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'sr', valuedLong: ['--size', '--reference'] });
  invocation.engine.report('high', `destroys file contents: ${invocation.name}`);
  for (const value of optionValues(parsed, '-r', '--reference')) checkRead(invocation, value);
  for (const operand of parsed.operands) checkWrite(invocation, operand);
  return undefined;
};

const shred: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'ns', valuedLong: ['--iterations', '--size', '--random-source', '--remove'] });
  invocation.engine.report('high', `destroys file contents: ${invocation.name}`);
  const removes = hasOption(parsed, '-u', '--remove');
  for (const operand of parsed.operands) {
    if (removes) checkRemove(invocation, operand);
    else checkWrite(invocation, operand);
  }
  return undefined;
};

/** dd: high in itself; `if=` is read and `of=` written (a disk there is critical). */
const dd: CommandRule = (invocation) => {
  invocation.engine.report('high', `writes raw data: ${invocation.name}`);
  for (const argument of invocation.args) {
    const text = textOf(argument);
    if (text === null) {
      invocation.engine.report('high', `argument cannot be resolved statically: ${argument.text}`);
      continue;
    }
    const match = /^(if|of)=(.*)$/s.exec(text);
    if (match === null) continue;
    const [, key, written = ''] = match;
    // bash expands a leading `~` after `=` in an argument shaped like an assignment.
    const home = invocation.scope.home;
    const path = /^~(\/|$)/.test(written) && home !== null ? home + written.slice(1) : written;
    const target: Argument = { text: written, value: literalValue(path), remote: argument.remote };
    if (key === 'if') checkRead(invocation, target);
    else checkWrite(invocation, target);
  }
  return undefined;
};

export const fileChangeRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['rm', rm],
  ['rmdir', removeEach],
  ['unlink', removeEach],
  ['mv', transfer('moves')],
  ['cp', transfer('copies')],
  ['ln', ln],
  ['install', install],
  ['mkdir', writesOperands({ valued: 'mZ', valuedLong: ['--mode', '--context'] })],
  ['touch', writesOperands({ valued: 'dtr', valuedLong: ['--date', '--reference', '--time'] }, ['-r', '--reference'])],
  ['tee', writesOperands({})],
  ['chmod', permissions],
  ['chown', permissions],
  ['chgrp', permissions],
  ['truncate', truncate],
  ['shred', shred],
  ['dd', dd],
]);
