import type { Argument, CommandRule, Invocation } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, reportHiddenOptions, type OptionSyntax, type ParsedCommand } from './command-options.js';
import { checkRead, checkWrite } from './path-access.js';
import { literalValue } from './shell-words.js';

/** How a read-only command uses its arguments. */
export interface InspectionSpec {
  readonly syntax?: OptionSyntax;
  /** `paths`: operands are files read; `none`: operands are not paths (echo, tr, basename). */
  readonly operands: 'paths' | 'none';
  /** The first operand is a pattern or program unless one of these options supplied it. */
  readonly patternFirst?: readonly string[];
  readonly readOptions?: readonly string[];
  readonly writeOptions?: readonly string[];
  /** Options that make the tool run another program. */
  readonly runOptions?: readonly string[];
  /** Index of an operand that is an output file (`uniq in out`, `xxd in out`). */
  readonly outputOperand?: number;
  /** Without path operands the command reads the current directory. */
  readonly readsCwd?: (parsed: ParsedCommand) => boolean;
}

/** The current directory as an operand, for commands that read it when given none. */
export const currentDirectory: Argument = { text: '.', value: literalValue('.'), remote: false };

/**
 * A command from the read-only allow-list: low ("read-only inspection") while every path it reads
 * is inside the workspaces (or /tmp, /dev/null, …); anything it would write or run raises it.
 */
export function inspect(invocation: Invocation, spec: InspectionSpec): ParsedCommand {
  const { engine, name } = invocation;
  const parsed = parseOptions(invocation.args, spec.syntax);
  let readOnly = true;
  const optionsMatter = [spec.runOptions, spec.writeOptions, spec.readOptions, spec.patternFirst].some((list) => (list?.length ?? 0) > 0);
  if (optionsMatter && parsed.mayBeOptions.length > 0) {
    reportHiddenOptions(engine, name, parsed);
    readOnly = false;
  }
  for (const option of spec.runOptions ?? []) {
    if (!hasOption(parsed, option)) continue;
    engine.report('high', `runs another program: ${name} ${option}`);
    readOnly = false;
  }
  for (const value of optionValues(parsed, ...(spec.writeOptions ?? []))) {
    checkWrite(invocation, value);
    readOnly = false;
  }
  for (const value of optionValues(parsed, ...(spec.readOptions ?? []))) checkRead(invocation, value);
  if (spec.operands === 'paths') {
    const skip = spec.patternFirst !== undefined && !hasOption(parsed, ...spec.patternFirst) ? 1 : 0;
    const paths = parsed.operands.slice(skip);
    paths.forEach((operand, index) => {
      if (index + skip === spec.outputOperand) {
        checkWrite(invocation, operand);
        readOnly = false;
      } else {
        checkRead(invocation, operand);
      }
    });
    if (paths.length === 0 && spec.readsCwd?.(parsed) === true) checkRead(invocation, currentDirectory);
  }
  if (readOnly) engine.report('low', 'read-only inspection');
  return parsed;
}

const always = (): boolean => true;
const recursive = (parsed: ParsedCommand): boolean => hasOption(parsed, '-r', '-R', '--recursive', '--dereference-recursive');

const grep: InspectionSpec = {
  syntax: {
    valued: 'efmABCdD',
    valuedLong: ['--regexp', '--file', '--max-count', '--after-context', '--before-context', '--context', '--include', '--exclude',
      '--exclude-dir', '--exclude-from', '--label', '--binary-files', '--devices', '--directories', '--group-separator'],
  },
  operands: 'paths',
  patternFirst: ['-e', '-f', '--regexp', '--file'],
  readOptions: ['-f', '--file', '--exclude-from'],
  readsCwd: recursive,
};

const checksum: InspectionSpec = { operands: 'paths' };
const plainPaths: InspectionSpec = { operands: 'paths' };
const noPaths: InspectionSpec = { operands: 'none' };

const specs: Record<string, InspectionSpec> = {
  ls: {
    syntax: { valued: 'ITw', valuedLong: ['--ignore', '--hide', '--width', '--tabsize', '--format', '--sort', '--time', '--time-style',
      '--quoting-style', '--indicator-style', '--block-size'] },
    operands: 'paths', readsCwd: always,
  },
  cat: plainPaths,
  tac: { syntax: { valued: 's', valuedLong: ['--separator'] }, operands: 'paths' },
  head: { syntax: { valued: 'nc', valuedLong: ['--lines', '--bytes'] }, operands: 'paths' },
  tail: { syntax: { valued: 'ncs', valuedLong: ['--lines', '--bytes', '--sleep-interval', '--pid', '--max-unchanged-stats'] }, operands: 'paths' },
  less: {
    syntax: { valued: 'bhjkoOpPtTxyz#', valuedLong: ['--log-file', '--LOG-FILE', '--lesskey-file', '--pattern', '--prompt', '--tag', '--tag-file'] },
    operands: 'paths', writeOptions: ['-o', '-O', '--log-file', '--LOG-FILE'], readOptions: ['-k', '--lesskey-file', '-T', '--tag-file'],
  },
  grep, egrep: grep, fgrep: grep,
  rg: {
    syntax: {
      valued: 'efgtTmABCMjErd',
      valuedLong: ['--regexp', '--file', '--glob', '--iglob', '--type', '--type-not', '--type-add', '--type-clear', '--max-count',
        '--after-context', '--before-context', '--context', '--max-columns', '--threads', '--encoding', '--replace', '--max-depth',
        '--max-filesize', '--pre', '--pre-glob', '--ignore-file', '--path-separator', '--sort', '--sortr', '--colors', '--color',
        '--context-separator', '--field-match-separator', '--field-context-separator', '--hostname-bin', '--dfa-size-limit',
        '--regex-size-limit', '--engine', '--generate', '--hyperlink-format'],
    },
    operands: 'paths',
    patternFirst: ['-e', '-f', '--regexp', '--file', '--files', '--type-list'],
    readOptions: ['-f', '--file', '--ignore-file'],
    runOptions: ['--pre', '--hostname-bin'],
    readsCwd: always,
  },
  ag: {
    syntax: { valued: 'ABCGgmpW', valuedLong: ['--after', '--before', '--context', '--file-search-regex', '--ignore', '--ignore-dir',
      '--depth', '--max-count', '--path-to-ignore', '--pager', '--workers', '--width'] },
    operands: 'paths', patternFirst: ['-g'], readOptions: ['-p', '--path-to-ignore'], runOptions: ['--pager'], readsCwd: always,
  },
  wc: { syntax: { valuedLong: ['--files0-from'] }, operands: 'paths', readOptions: ['--files0-from'] },
  tree: {
    syntax: { valued: 'LIPoHT', valuedLong: ['--filelimit', '--charset', '--timefmt', '--sort', '--gitfile', '--infofile'] },
    operands: 'paths', writeOptions: ['-o'], readOptions: ['--gitfile', '--infofile'], readsCwd: always,
  },
  stat: { syntax: { valued: 'c', valuedLong: ['--format', '--printf'] }, operands: 'paths' },
  file: {
    syntax: { valued: 'mfFeP', valuedLong: ['--magic-file', '--files-from', '--separator', '--exclude', '--parameter'] },
    operands: 'paths', readOptions: ['-m', '-f', '--magic-file', '--files-from'],
  },
  du: {
    syntax: { valued: 'dBtX', valuedLong: ['--max-depth', '--block-size', '--threshold', '--exclude', '--exclude-from', '--time-style',
      '--files0-from', '--time'] },
    operands: 'paths', readOptions: ['-X', '--exclude-from', '--files0-from'], readsCwd: always,
  },
  diff: {
    syntax: {
      valued: 'xXIFLUCWD',
      valuedLong: ['--exclude', '--exclude-from', '--ignore-matching-lines', '--show-function-line', '--label', '--unified', '--context',
        '--width', '--from-file', '--to-file', '--tabsize', '--line-format', '--old-line-format', '--new-line-format',
        '--unchanged-line-format', '--old-group-format', '--new-group-format', '--changed-group-format', '--unchanged-group-format',
        '--horizon-lines', '--ifdef', '--palette'],
    },
    operands: 'paths', readOptions: ['-X', '--exclude-from', '--from-file', '--to-file'],
  },
  cmp: { syntax: { valued: 'in', valuedLong: ['--ignore-initial', '--bytes'] }, operands: 'paths' },
  sort: {
    syntax: { valued: 'kotST', valuedLong: ['--key', '--output', '--field-separator', '--buffer-size', '--temporary-directory',
      '--compress-program', '--files0-from', '--parallel', '--batch-size', '--random-source', '--sort'] },
    operands: 'paths',
    writeOptions: ['-o', '--output', '-T', '--temporary-directory'],
    readOptions: ['--files0-from', '--random-source'],
    runOptions: ['--compress-program'],
  },
  uniq: { syntax: { valued: 'fsw', valuedLong: ['--skip-fields', '--skip-chars', '--check-chars'] }, operands: 'paths', outputOperand: 1 },
  cut: { syntax: { valued: 'bcdf', valuedLong: ['--bytes', '--characters', '--delimiter', '--fields', '--output-delimiter'] }, operands: 'paths' },
  nl: { syntax: { valued: 'bdfhilnsvw' }, operands: 'paths' },
  od: { syntax: { valued: 'AjNtwS', valuedLong: ['--address-radix', '--skip-bytes', '--read-bytes', '--format', '--width', '--strings', '--endian'] }, operands: 'paths' },
  hexdump: { syntax: { valued: 'efns' }, operands: 'paths', readOptions: ['-f'] },
  strings: { syntax: { valued: 'ntTe', valuedLong: ['--bytes', '--radix', '--target', '--encoding', '--output-separator'] }, operands: 'paths' },
  md5sum: checksum, sha1sum: checksum, sha224sum: checksum, sha256sum: checksum, sha384sum: checksum, sha512sum: checksum,
  b2sum: checksum, cksum: checksum, sum: checksum,
  realpath: { syntax: { valuedLong: ['--relative-to', '--relative-base'] }, operands: 'paths', readOptions: ['--relative-to', '--relative-base'] },
  readlink: plainPaths,
  column: { syntax: { valued: 'scoNlRHWEOTd' }, operands: 'paths' },
  paste: { syntax: { valued: 'd', valuedLong: ['--delimiters'] }, operands: 'paths' },
  comm: { syntax: { valuedLong: ['--output-delimiter'] }, operands: 'paths' },
  join: { syntax: { valued: 'aejotv12' }, operands: 'paths' },
  fold: { syntax: { valued: 'w', valuedLong: ['--width'] }, operands: 'paths' },
  fmt: { syntax: { valued: 'wpg', valuedLong: ['--width', '--prefix', '--goal'] }, operands: 'paths' },
  tr: noPaths,
  basename: { syntax: { valued: 's', valuedLong: ['--suffix'] }, operands: 'none' },
  dirname: noPaths,
  pwd: noPaths,
  echo: noPaths,
  true: noPaths,
  false: noPaths,
  ':': noPaths,
  type: noPaths,
  which: noPaths,
};

const xxd: CommandRule = (invocation) => {
  const parsed = inspect(invocation, { syntax: { valued: 'cglosn' }, operands: 'paths', outputOperand: 1 });
  return hasOption(parsed, '-r', '-revert') ? { network: false, stdinCode: false, decoder: true } : undefined;
};

export const readOnlyRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ...Object.entries(specs).map(([name, spec]): [string, CommandRule] => [name, (invocation) => {
    inspect(invocation, spec);
    return undefined;
  }]),
  ['xxd', xxd],
]);
