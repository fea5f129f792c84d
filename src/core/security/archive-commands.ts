import type { Argument, CommandRule } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf, type ParsedOption, reportHiddenOptions } from './command-options.js';
import { checkRead, checkWrite } from './path-access.js';
import { currentDirectory } from './read-only-commands.js';

const tarValued = 'fCTXIFKNgLbHV';
const tarValuedLong = [
  '--file', '--directory', '--files-from', '--exclude-from', '--use-compress-program', '--info-script', '--new-volume-script',
  '--starting-file', '--newer', '--after-date', '--listed-incremental', '--tape-length', '--blocking-factor', '--format', '--label',
  '--to-command', '--checkpoint-action', '--rsh-command', '--exclude', '--transform', '--xform', '--owner', '--group', '--mode',
  '--mtime', '--strip-components', '--suffix', '--index-file', '--volno-file', '--record-size', '--newer-mtime',
];
/** Options that make tar run a program of the caller's choosing. */
const tarRunners = ['--to-command', '-I', '--use-compress-program', '--checkpoint-action', '-F', '--info-script', '--new-volume-script', '--rsh-command'];

/** Old-style `tar xzf a.tgz`: a first word of letters, whose valued letters take the next words in order. */
function oldStyleOptions(args: readonly Argument[]): { options: ParsedOption[]; rest: readonly Argument[] } {
  const first = textOf(args[0]);
  if (first === null || first.startsWith('-') || !/^[A-Za-z]+$/.test(first)) return { options: [], rest: args };
  const options: ParsedOption[] = [];
  let next = 1;
  for (const letter of first) {
    const value = tarValued.includes(letter) ? (args[next] ?? null) : null;
    if (value !== null) next += 1;
    options.push({ name: `-${letter}`, value });
  }
  return { options, rest: args.slice(next) };
}

/**
 * tar: extracting writes into `-C` (or the cwd), creating writes the archive and reads the
 * operands; `--to-command` and its kind run programs; `-P` extracts absolute member names anywhere.
 */
const tar: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  const old = oldStyleOptions(invocation.args);
  const modern = parseOptions(old.rest, { valued: tarValued, valuedLong: tarValuedLong });
  const parsed = { ...modern, options: [...old.options, ...modern.options] };
  for (const runner of tarRunners) if (hasOption(parsed, runner)) engine.report('high', `runs another program: ${name} ${runner}`);
  reportHiddenOptions(engine, name, parsed);
  const extracting = hasOption(parsed, '-x', '--extract', '--get');
  const creating = hasOption(parsed, '-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate', '--delete');
  for (const archive of optionValues(parsed, '-f', '--file')) {
    if (textOf(archive) === '-') continue;
    if (creating) checkWrite(invocation, archive);
    else checkRead(invocation, archive);
  }
  for (const list of optionValues(parsed, '-T', '--files-from', '-X', '--exclude-from')) checkRead(invocation, list);
  const directories = optionValues(parsed, '-C', '--directory');
  if (extracting) {
    checkWrite(invocation, directories.at(-1) ?? currentDirectory);
    if (hasOption(parsed, '-P', '--absolute-names')) engine.report('high', `extracts absolute paths: ${name} -P`);
    engine.report('medium', `extracts an archive: ${name}`);
  } else {
    for (const directory of directories) checkRead(invocation, directory);
    if (creating) for (const operand of parsed.operands) checkRead(invocation, operand);
    engine.report('medium', `not a known read-only command: ${name}`);
  }
  return undefined;
};

const unzip: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'dPOI' });
  const [archive] = parsed.operands;
  if (archive !== undefined) checkRead(invocation, archive);
  const listsOnly = hasOption(parsed, '-l', '-t', '-v', '-z', '-Z', '-p', '-c');
  if (!listsOnly) checkWrite(invocation, optionValues(parsed, '-d').at(-1) ?? currentDirectory);
  invocation.engine.report('medium', `extracts an archive: ${invocation.name}`);
  return undefined;
};

/** zip: writes its archive, reads the files; `-TT`/`--unzip-command` runs a program to test the archive. */
const zip: CommandRule = (invocation) => {
  const args = [...invocation.args];
  const tester = args.findIndex((argument) => {
    const text = textOf(argument);
    return text === '-TT' || (text !== null && text.startsWith('--unz'));
  });
  if (tester >= 0) {
    invocation.engine.report('high', `runs another program: ${invocation.name} -TT`);
    args.splice(tester, textOf(args[tester])?.includes('=') === true ? 1 : 2);
  }
  const parsed = parseOptions(args, { valued: 'bnPOZs', valuedLong: ['--temp-path', '--output-file', '--password'] });
  const [archive, ...files] = parsed.operands;
  if (archive !== undefined) checkWrite(invocation, archive);
  for (const file of files) checkRead(invocation, file);
  for (const output of optionValues(parsed, '-O', '--output-file')) checkWrite(invocation, output);
  invocation.engine.report('medium', `writes an archive: ${invocation.name}`);
  return undefined;
};

export const archiveRules: ReadonlyMap<string, CommandRule> = new Map([['tar', tar], ['unzip', unzip], ['zip', zip]]);
