import type { CommandRule } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, textOf } from './command-options.js';
import { checkUnknownArguments, checkWrite } from './path-access.js';
import { packageRunnerVerb } from './program-runners.js';

const kill: CommandRule = (invocation) => {
  const listsSignals = invocation.args.every((argument) => ['-l', '-L', '--list', '--table'].includes(textOf(argument) ?? ''));
  if (invocation.args.length > 0 && listsSignals) invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  else invocation.engine.report('high', `kills processes: ${invocation.name}`);
  return undefined;
};

const formatsDisk: CommandRule = (invocation) => {
  invocation.engine.report('critical', `formats or partitions a disk: ${invocation.name}`);
  return undefined;
};

const shutsDown: CommandRule = (invocation) => {
  invocation.engine.report('critical', `shuts down or reboots the machine: ${invocation.name}`);
  return undefined;
};

const init: CommandRule = (invocation) => {
  const [runlevel] = invocation.args.map(textOf);
  if (invocation.name === 'telinit' || runlevel === '0' || runlevel === '6' || runlevel === null) return shutsDown(invocation);
  invocation.engine.report('high', `changes the run level: ${invocation.name}`);
  return undefined;
};

const powerVerbs: ReadonlySet<string> = new Set(['reboot', 'poweroff', 'halt', 'kexec', 'soft-reboot', 'emergency', 'rescue']);

const systemctl: CommandRule = (invocation) => {
  const parsed = parseOptions(invocation.args, { valued: 'tpHMsn', valuedLong: ['--type', '--property', '--host', '--machine', '--signal', '--lines', '--output', '--root'] });
  const verb = textOf(parsed.operands[0]);
  if (verb === null || powerVerbs.has(verb)) return shutsDown(invocation);
  invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
  return undefined;
};

/**
 * Package managers are medium (CONTRACT §4), but installing globally or per user puts code
 * outside the workspaces where every later command may pick it up.
 */
const packageManager: CommandRule = (invocation) => {
  const { engine, name } = invocation;
  engine.report('medium', `package manager: ${name}`);
  // `npm exec`, `pnpm dlx`, …: a package's program, fetched if missing (CONTRACT §11).
  if (packageRunnerVerb(name, textOf(invocation.args.find((argument) => !(textOf(argument) ?? '-').startsWith('-'))))) {
    engine.report('high', `runs a package's program, fetched if missing: ${name} ${textOf(invocation.args.find((argument) => !(textOf(argument) ?? '-').startsWith('-'))) ?? ''}`);
  }
  const parsed = parseOptions(invocation.args, { valuedLong: ['--prefix', '--target', '--root', '--cache', '--global-folder'] });
  const words = invocation.args.map(textOf);
  const global = hasOption(parsed, '-g', '--global')
    || optionValues(parsed, '--location').some((value) => textOf(value) === 'global')
    || (name === 'yarn' && words[0] === 'global');
  if (global) engine.report('high', `installs outside the workspaces: ${name} --global`);
  if (name.startsWith('pip') && hasOption(parsed, '--user')) engine.report('high', `installs outside the workspaces: ${name} --user`);
  for (const target of optionValues(parsed, '--prefix', '--target', '-t', '--root')) checkWrite(invocation, target);
  checkUnknownArguments(invocation, parsed.operands);
  return undefined;
};

export const systemRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ...['kill', 'killall', 'pkill', 'skill', 'xkill', 'killall5'].map((name): [string, CommandRule] => [name, kill]),
  ...['mkfs', 'mke2fs', 'mkswap', 'wipefs', 'fdisk', 'sfdisk', 'cfdisk', 'gdisk', 'sgdisk', 'parted', 'blkdiscard', 'mkntfs', 'mkdosfs']
    .map((name): [string, CommandRule] => [name, formatsDisk]),
  ...['shutdown', 'reboot', 'halt', 'poweroff'].map((name): [string, CommandRule] => [name, shutsDown]),
  ['init', init], ['telinit', init],
  ['systemctl', systemctl],
  ...['npm', 'pnpm', 'yarn', 'bun', 'pip', 'pip3', 'pipx', 'poetry', 'uv', 'cargo', 'gem', 'bundle', 'composer', 'go', 'conda',
    'apt', 'apt-get', 'dnf', 'yum', 'brew', 'apk', 'pacman', 'zypper'].map((name): [string, CommandRule] => [name, packageManager]),
]);
