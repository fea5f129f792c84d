import type { Argument, CommandRule, Effects } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, subArgument, textOf, type OptionSyntax, reportHiddenOptions } from './command-options.js';
import { checkRead, checkWrite } from './path-access.js';
import { currentDirectory } from './read-only-commands.js';

const fetches: Effects = { network: true, stdinCode: false, decoder: false };

interface NetworkSpec {
  readonly syntax?: OptionSyntax;
  readonly writeOptions?: readonly string[];
  readonly readOptions?: readonly string[];
  readonly runOptions?: readonly string[];
}

/** A network tool: high in itself; its output counts as remote for whatever it is piped into. */
function networkTool(spec: NetworkSpec = {}): CommandRule {
  return (invocation) => {
    const { engine, name } = invocation;
    engine.report('high', `network tool: ${name}`);
    const parsed = parseOptions(invocation.args, spec.syntax);
    for (const option of spec.runOptions ?? []) if (hasOption(parsed, option)) engine.report('high', `runs another program: ${name} ${option}`);
    for (const file of optionValues(parsed, ...(spec.writeOptions ?? []))) checkWrite(invocation, file);
    for (const file of optionValues(parsed, ...(spec.readOptions ?? []))) checkRead(invocation, file);
    return fetches;
  };
}

const curlSyntax: OptionSyntax = {
  valued: 'oudHXAebcDFTKxwmrEYyzCUQtP',
  valuedLong: ['--output', '--output-dir', '--data', '--data-binary', '--data-raw', '--data-urlencode', '--data-ascii', '--header', '--request',
    '--user', '--user-agent', '--referer', '--cookie', '--cookie-jar', '--dump-header', '--form', '--upload-file', '--config', '--proxy',
    '--write-out', '--max-time', '--range', '--cert', '--trace', '--trace-ascii', '--stderr', '--etag-save', '--etag-compare', '--json'],
};

/** curl: `-o`/`-D`/`-c`/… write files, `-T`/`-K`/`@file` data read them, `-O` writes into the cwd. */
const curl: CommandRule = (invocation) => {
  const effects = networkTool({
    syntax: curlSyntax,
    writeOptions: ['-o', '--output', '--output-dir', '-c', '--cookie-jar', '-D', '--dump-header', '--trace', '--trace-ascii', '--stderr', '--etag-save'],
    readOptions: ['-T', '--upload-file', '-K', '--config', '--etag-compare'],
  })(invocation);
  const parsed = parseOptions(invocation.args, curlSyntax);
  for (const data of optionValues(parsed, '-d', '--data', '--data-binary', '--data-urlencode', '--json')) {
    if (textOf(data)?.startsWith('@') === true) checkRead(invocation, subArgument(data, 1));
  }
  for (const form of optionValues(parsed, '-F', '--form')) {
    const file = /^[^=]*=[@<]/.exec(textOf(form) ?? '');
    if (file !== null) checkRead(invocation, subArgument(form, file[0].length));
  }
  if (hasOption(parsed, '-O', '--remote-name', '--remote-name-all', '-J')) checkWrite(invocation, currentDirectory);
  return effects;
};

const wget = networkTool({
  syntax: {
    valued: 'OoaPiTtwUeQBlDAR',
    valuedLong: ['--output-document', '--output-file', '--append-output', '--directory-prefix', '--input-file', '--post-file', '--body-file',
      '--load-cookies', '--save-cookies', '--execute', '--use-askpass', '--user-agent', '--header', '--tries', '--timeout', '--level'],
  },
  writeOptions: ['-O', '--output-document', '-o', '--output-file', '-a', '--append-output', '-P', '--directory-prefix', '--save-cookies'],
  readOptions: ['-i', '--input-file', '--post-file', '--body-file', '--load-cookies'],
  runOptions: ['-e', '--execute', '--use-askpass'],
});

const scpSyntax: OptionSyntax = { valued: 'cFiJloPSDX' };

function isRemote(argument: Argument): boolean {
  const text = textOf(argument);
  return text !== null && (/^[^/]*:/.test(text) || text.startsWith('rsync://'));
}

/** scp and rsync: local operands are read (sources) or written (the last one). */
function copyTool(syntax: OptionSyntax, runOptions: readonly string[], alwaysNetwork: boolean): CommandRule {
  return (invocation) => {
    const { engine, name } = invocation;
    const parsed = parseOptions(invocation.args, syntax);
    for (const option of runOptions) if (hasOption(parsed, option)) engine.report('high', `runs another program: ${name} ${option}`);
    reportHiddenOptions(engine, name, parsed);
    const remote = alwaysNetwork || parsed.operands.some(isRemote);
    if (remote) engine.report('high', `network tool: ${name}`);
    else engine.report('medium', `copies files: ${name}`);
    const destination = parsed.operands.at(-1);
    for (const operand of parsed.operands.slice(0, -1)) if (!isRemote(operand)) checkRead(invocation, operand);
    if (destination !== undefined && !isRemote(destination) && parsed.operands.length > 1) checkWrite(invocation, destination);
    return remote ? fetches : undefined;
  };
}

const rsync = copyTool({
  valued: 'eBTfM',
  valuedLong: ['--rsh', '--rsync-path', '--temp-dir', '--filter', '--exclude', '--include', '--exclude-from', '--include-from', '--files-from',
    '--compare-dest', '--copy-dest', '--link-dest', '--partial-dir', '--log-file', '--backup-dir', '--suffix', '--chmod', '--chown',
    '--usermap', '--groupmap', '--password-file', '--bwlimit', '--max-size', '--min-size', '--timeout', '--contimeout', '--port',
    '--sockopts', '--out-format', '--log-file-format', '--write-batch', '--read-batch', '--only-write-batch', '--iconv',
    '--checksum-choice', '--compress-choice', '--info', '--debug', '--skip-compress', '--max-delete', '--block-size',
    '--modify-window', '--remote-option'],
}, ['-e', '--rsh', '--rsync-path'], false);

export const networkRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ['curl', curl],
  ['wget', wget],
  ['scp', copyTool(scpSyntax, ['-S'], true)],
  ['rsync', rsync],
  ...['nc', 'ncat', 'netcat', 'ssh', 'sftp', 'telnet', 'ftp', 'socat', 'nmap', 'aria2c', 'lftp', 'tftp', 'http', 'https', 'xh', 'mosh', 'rclone']
    .map((name): [string, CommandRule] => [name, networkTool()]),
]);
