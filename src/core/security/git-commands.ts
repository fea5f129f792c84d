import { copyScope, type Argument, type CommandRule, type Invocation, type Scope } from './command-invocation.js';
import { hasOption, optionValues, parseOptions, subArgument, textOf, type OptionSyntax, type ParsedCommand } from './command-options.js';
import { runCodeArgument } from './code-strings.js';
import { gitKeyRunsPrograms } from './git-config-keys.js';
import { checkRead, checkRemove, checkUnknownArguments, checkWrite } from './path-access.js';
import { currentDirectory } from './read-only-commands.js';
import { literalValue } from './shell-words.js';

interface GitCall {
  readonly invocation: Invocation;
  readonly sub: string;
  readonly parsed: ParsedCommand;
  /** The raw arguments after the subcommand (to see a `--`). */
  readonly args: readonly Argument[];
}

type GitHandler = (call: GitCall) => void;

const readOnlySubcommands: ReadonlySet<string> = new Set([
  'status', 'diff', 'log', 'show', 'blame', 'annotate', 'grep', 'ls-files', 'ls-tree', 'rev-parse', 'describe', 'shortlog',
  'cat-file', 'show-ref', 'rev-list', 'merge-base', 'for-each-ref', 'check-ignore', 'count-objects', 'whatchanged', 'name-rev',
  'cherry', 'range-diff', 'diff-tree', 'diff-index', 'diff-files', 'version', 'help',
]);
/** Subcommands that do not need an existing repository in the cwd. */
const repositoryFree: ReadonlySet<string> = new Set(['clone', 'init', 'help', 'version', 'ls-remote']);

const commonLong = [
  '--message', '--file', '--template', '--upload-pack', '--receive-pack', '--exec', '--config', '--branch', '--origin', '--output',
  '--output-directory', '--reference', '--separate-git-dir', '--depth', '--shallow-since', '--shallow-exclude', '--jobs', '--strategy',
  '--strategy-option', '--author', '--date', '--cleanup', '--reuse-message', '--reedit-message', '--fixup', '--squash',
  '--pathspec-from-file', '--onto', '--format', '--pretty', '--since', '--until', '--after', '--before', '--grep', '--committer',
  '--max-count', '--skip', '--encoding', '--expire', '--remote', '--prefix', '--set-upstream-to', '--points-at', '--sort', '--extcmd', '--tool',
];
const shortValued: Record<string, string> = {
  commit: 'mFCct', tag: 'mFu', merge: 'mFsX', stash: 'm', log: 'nSGL', show: 'nSGL', whatchanged: 'nSGL', shortlog: 'n', diff: 'SGO',
  grep: 'efmABC', clone: 'obucj', push: 'o', fetch: 'j', pull: 'jsX', checkout: 'bB', switch: 'cC', branch: 'u', rebase: 'xsX',
  'cherry-pick': 'mX', revert: 'mX', archive: 'o', 'format-patch': 'ov', worktree: 'bB', clean: 'e', config: 'f', notes: 'mFCc',
  difftool: 'xt', mergetool: 't',
};

function syntaxOf(sub: string): OptionSyntax {
  return { valued: shortValued[sub] ?? '', attached: sub === 'grep' ? 'O' : sub === 'commit' ? 'u' : '', valuedLong: commonLong };
}

function report(call: GitCall, level: 'medium' | 'high', reason: string): void {
  call.invocation.engine.report(level, reason);
}

function readOnly(call: GitCall): void {
  call.invocation.engine.report('low', 'read-only inspection');
}

function changes(call: GitCall): void {
  report(call, 'medium', `changes the repository: git ${call.sub}`);
}
const has = (call: GitCall, ...names: string[]): boolean => hasOption(call.parsed, ...names);
const operand = (call: GitCall, index: number): string | null => textOf(call.parsed.operands[index]);

function runsProgram(call: GitCall, ...options: string[]): boolean {
  const found = options.find((option) => has(call, option));
  if (found !== undefined) report(call, 'high', `runs another program: git ${call.sub} ${found}`);
  return found !== undefined;
}

const inspection: GitHandler = (call) => {
  for (const output of optionValues(call.parsed, '--output')) checkWrite(call.invocation, output);
  const pager = call.sub === 'grep' && runsProgram(call, '-O', '--open-files-in-pager');
  if (!pager && !has(call, '--output')) readOnly(call);
};

const branch: GitHandler = (call) => {
  const deleting = has(call, '-d', '--delete');
  if (has(call, '-D') || (deleting && has(call, '-f', '--force'))) report(call, 'high', 'deletes a branch: git branch -D');
  else if (has(call, '-l', '--list') || (call.parsed.operands.length === 0 && !deleting
    && !has(call, '-m', '-M', '-c', '-C', '--move', '--copy', '-u', '--set-upstream-to', '--unset-upstream', '--edit-description'))) readOnly(call);
  else changes(call);
};

const tag: GitHandler = (call) => {
  const creates = has(call, '-a', '-s', '-m', '-F', '-d', '-f', '-u', '--annotate', '--sign', '--delete', '--force');
  if (!creates && (call.parsed.operands.length === 0 || has(call, '-l', '--list'))) readOnly(call);
  else changes(call);
};

const subcommandOf = (call: GitCall, list: readonly (string | null)[]): boolean => list.includes(operand(call, 0));

function configWrite(call: GitCall, key: string | null): void {
  const { invocation } = call;
  if (key === null) report(call, 'high', 'sets a git option that cannot be resolved: git config');
  else if (gitKeyRunsPrograms(key)) report(call, 'high', `sets a git option that runs programs: ${key}`);
  const home = invocation.scope.home;
  if (has(call, '--global') && home !== null) checkWrite(invocation, { text: '~/.gitconfig', value: literalValue(`${home}/.gitconfig`), remote: false });
  if (has(call, '--system')) checkWrite(invocation, { text: '/etc/gitconfig', value: literalValue('/etc/gitconfig'), remote: false });
  for (const file of optionValues(call.parsed, '-f', '--file')) checkWrite(invocation, file);
  changes(call);
}

const config: GitHandler = (call) => {
  const reads = has(call, '--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool')
    || subcommandOf(call, ['get', 'list']) || (call.parsed.operands.length === 1 && !has(call, '--unset', '--unset-all', '--remove-section', '--rename-section', '-e', '--edit'));
  if (reads) {
    readOnly(call);
    return;
  }
  const modern = subcommandOf(call, ['set', 'unset', 'rename-section', 'remove-section', 'edit']);
  configWrite(call, operand(call, modern ? 1 : 0));
};

const push: GitHandler = (call) => {
  runsProgram(call, '--receive-pack', '--exec');
  const refspecs = call.parsed.operands.slice(1).map(textOf);
  if (has(call, '-f', '--force', '--force-with-lease', '--force-if-includes', '--mirror') || refspecs.some((spec) => spec?.startsWith('+'))) {
    report(call, 'high', 'rewrites remote history: git push --force');
  }
  if (has(call, '-d', '--delete', '--prune') || refspecs.some((spec) => spec?.startsWith(':'))) report(call, 'high', 'deletes remote branches: git push --delete');
  changes(call);
};

const checkout: GitHandler = (call) => {
  const pathsGiven = call.args.some((argument) => textOf(argument) === '--') || call.parsed.operands.length > 1 || operand(call, 0) === '.';
  if (has(call, '-f', '--force') || pathsGiven) report(call, 'high', `discards uncommitted changes: git ${call.sub}`);
  changes(call);
};

const clone: GitHandler = (call) => {
  const { invocation, parsed } = call;
  runsProgram(call, '-u', '--upload-pack', '--template');
  for (const setting of optionValues(parsed, '-c', '--config')) {
    const key = textOf(setting)?.split('=')[0] ?? null;
    if (key === null || gitKeyRunsPrograms(key)) report(call, 'high', `sets a git option that runs programs: ${key ?? setting.text}`);
  }
  for (const directory of optionValues(parsed, '--separate-git-dir')) checkWrite(invocation, directory);
  for (const reference of optionValues(parsed, '--reference')) checkRead(invocation, reference);
  const [source, destination] = parsed.operands;
  if (source !== undefined && textOf(source)?.includes('://') !== true) checkUnknownArguments(invocation, [source]);
  checkWrite(invocation, call.sub === 'init' ? (source ?? currentDirectory) : (destination ?? currentDirectory));
  changes(call);
};

const fetchLike: GitHandler = (call) => {
  runsProgram(call, '--upload-pack');
  changes(call);
};

/**
 * difftool and mergetool run a diff or merge program: the one named on the line, or else the one
 * the configuration names, often an editor that runs what is typed into it (CONTRACT §11).
 */
const externalTool: GitHandler = (call) => {
  if (!runsProgram(call, '-x', '--extcmd', '-t', '--tool')) report(call, 'high', `runs another program: git ${call.sub}`);
  changes(call);
};

const rewritesHistory: GitHandler = (call) => {
  report(call, 'high', `rewrites history: git ${call.sub}`);
};

const handlers: Record<string, GitHandler> = {
  branch, tag, config, push, clone, checkout,
  init: clone,
  remote: (call) => {
    if (call.parsed.operands.length === 0 || subcommandOf(call, ['get-url', 'show'])) readOnly(call);
    else changes(call);
  },
  reflog: (call) => {
    if (subcommandOf(call, ['expire', 'delete'])) report(call, 'high', `rewrites history: git reflog ${operand(call, 0) ?? ''}`);
    else if (call.parsed.operands.length === 0 || subcommandOf(call, ['show', 'exists'])) readOnly(call);
    else changes(call);
  },
  stash: (call) => {
    if (subcommandOf(call, ['list', 'show'])) readOnly(call);
    else if (subcommandOf(call, ['drop', 'clear'])) report(call, 'high', `discards stashed changes: git stash ${operand(call, 0) ?? ''}`);
    else changes(call);
  },
  rm: (call) => {
    // `-f` removes files whose changes were never committed; with `-r`, whole folders of them.
    if (has(call, '-f', '--force') && has(call, '-r')) report(call, 'high', 'removes files with their uncommitted changes: git rm -rf');
    else changes(call);
  },
  reset: (call) => {
    if (has(call, '--hard')) report(call, 'high', 'discards uncommitted changes: git reset --hard');
    else changes(call);
  },
  clean: (call) => {
    if (has(call, '-n', '--dry-run')) changes(call);
    else report(call, 'high', 'deletes untracked files: git clean');
  },
  switch: (call) => {
    if (has(call, '-f', '--force', '--discard-changes')) report(call, 'high', 'discards uncommitted changes: git switch');
    else changes(call);
  },
  restore: (call) => {
    if (has(call, '-S', '--staged') && !has(call, '-W', '--worktree')) changes(call);
    else report(call, 'high', 'discards uncommitted changes: git restore');
  },
  'filter-branch': rewritesHistory,
  'filter-repo': rewritesHistory,
  prune: (call) => {
    if (has(call, '-n', '--dry-run')) changes(call);
    else report(call, 'high', 'prunes unreachable objects: git prune');
  },
  gc: (call) => {
    const prune = optionValues(call.parsed, '--prune').map(textOf);
    if (prune.includes('now') || prune.includes('all')) report(call, 'high', 'prunes unreachable objects: git gc --prune=now');
    changes(call);
  },
  'update-ref': (call) => {
    if (has(call, '-d')) report(call, 'high', 'deletes a ref: git update-ref -d');
    else changes(call);
  },
  rebase: (call) => {
    runsProgram(call, '-x', '--exec');
    changes(call);
  },
  fetch: fetchLike,
  pull: fetchLike,
  'ls-remote': (call) => {
    runsProgram(call, '-u', '--upload-pack');
    changes(call);
  },
  archive: (call) => {
    runsProgram(call, '--exec');
    for (const output of optionValues(call.parsed, '-o', '--output')) checkWrite(call.invocation, output);
    changes(call);
  },
  'format-patch': (call) => {
    for (const output of optionValues(call.parsed, '-o', '--output-directory')) checkWrite(call.invocation, output);
    changes(call);
  },
  worktree: (call) => {
    const path = call.parsed.operands[1];
    if (path !== undefined && subcommandOf(call, ['add'])) checkWrite(call.invocation, path);
    if (path !== undefined && subcommandOf(call, ['remove'])) checkRemove(call.invocation, path);
    changes(call);
  },
  bisect: (call) => {
    if (!subcommandOf(call, ['run'])) {
      changes(call);
      return;
    }
    report(call, 'high', 'runs another program: git bisect run');
    call.invocation.engine.runCommand(call.parsed.operands.slice(1), copyScope(call.invocation.scope), { kind: 'terminal' }, false);
  },
  submodule: (call) => {
    const at = call.parsed.operands.findIndex((argument) => textOf(argument) === 'foreach');
    if (at < 0) {
      changes(call);
      return;
    }
    report(call, 'high', 'runs another program: git submodule foreach');
    const [code] = call.parsed.operands.slice(at + 1);
    if (code !== undefined) runCodeArgument(call.invocation, code, 'git submodule foreach');
  },
  difftool: externalTool,
  mergetool: externalTool,
};

/** Global options before the subcommand; returns where the subcommand is and the scope it runs in. */
function globalOptions(invocation: Invocation): { index: number; scope: Scope } {
  const { args, engine } = invocation;
  let scope = invocation.scope;
  let index = 0;
  for (; index < args.length; index += 1) {
    const argument = args[index];
    const text = textOf(argument);
    if (argument === undefined || text === null || !text.startsWith('-')) break;
    const next = args[index + 1];
    if (text === '-C' && next !== undefined) {
      const target = checkRead({ engine, scope }, next);
      scope = copyScope(scope, { cwd: target.kind === 'path' ? target.located.real : null });
      index += 1;
    } else if (text === '-c' || text.startsWith('--config-env')) {
      engine.report('high', `git -c can make git run programs: ${text === '-c' ? (next?.text ?? '') : text}`);
      if (!text.includes('=')) index += 1;
    } else if (text.startsWith('--exec-path=')) {
      engine.report('high', 'runs another program: git --exec-path');
    } else if (/^--(git-dir|work-tree)=/.test(text)) {
      checkRead({ engine, scope }, subArgument(argument, text.indexOf('=') + 1));
    } else if (['--git-dir', '--work-tree'].includes(text) && next !== undefined) {
      checkRead({ engine, scope }, next);
      index += 1;
    } else if (['--namespace', '--super-prefix', '--attr-source', '--list-cmds'].includes(text)) {
      index += 1;
    }
  }
  return { index, scope };
}

/** git: read-only subcommands are low, the rest medium, with the contract's destructive forms high. */
const git: CommandRule = (outer) => {
  const { index, scope } = globalOptions(outer);
  const invocation = { ...outer, scope };
  const argument = outer.args[index];
  const sub = textOf(argument);
  if (argument === undefined || sub === null) {
    if (argument !== undefined) outer.engine.report('high', `argument cannot be resolved statically: ${argument.text}`);
    else outer.engine.report('medium', 'not a known read-only command: git');
    return undefined;
  }
  const args = outer.args.slice(index + 1);
  const call: GitCall = { invocation, sub, parsed: parseOptions(args, syntaxOf(sub)), args };
  if (!repositoryFree.has(sub)) checkRead(invocation, currentDirectory);
  checkUnknownArguments(invocation, call.parsed.operands);
  const handler = handlers[sub] ?? (readOnlySubcommands.has(sub) ? inspection : changes);
  handler(call);
  checkEditor(call);
  return undefined;
};

/** The editor-free forms of the subcommands that open one: a message given, or editing refused. */
const EDITOR_FREE: Readonly<Record<string, readonly string[]>> = {
  commit: ['-m', '--message', '-F', '--file', '-C', '--reuse-message', '--no-edit', '--fixup', '--dry-run'],
  merge: ['-m', '--message', '-F', '--file', '--no-edit', '--ff-only', '--squash', '--no-commit', '--abort', '--continue', '--quit'],
  revert: ['--no-edit', '--abort', '--quit', '--skip'],
  tag: ['-m', '--message', '-F', '--file', '-d', '--delete', '-l', '--list', '-v', '--verify'],
  notes: ['-m', '--message', '-F', '--file', '-C', '--reuse-message'],
};

/**
 * CONTRACT §11: a command that starts an editor is high, since what is typed into an editor is
 * not judged (`:!cmd` runs a shell). git opens one for a commit without a message, an annotated
 * tag, an interactive rebase, `add -p`/`-i`/`-e`, … unless the terminal's GIT_EDITOR, VISUAL or
 * EDITOR is known, in which case that command is what is judged (shell-walk.ts).
 */
function checkEditor(call: GitCall): void {
  const { sub } = call;
  const variables = call.invocation.scope.state.variables;
  if (['GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'VISUAL', 'EDITOR'].some((name) => name in variables)) return;
  const free = EDITOR_FREE[sub];
  const opens =
    has(call, '-e', '--edit') && ['commit', 'merge', 'revert', 'cherry-pick', 'tag', 'add', 'pull'].includes(sub) ? true
      : sub === 'commit' || sub === 'merge' || sub === 'revert' ? free !== undefined && !has(call, ...free)
        : sub === 'tag' ? has(call, '-a', '--annotate', '-s', '--sign', '-u', '--local-user') && free !== undefined && !has(call, ...free)
          : sub === 'rebase' ? has(call, '-i', '--interactive', '--edit-todo')
            : sub === 'add' ? has(call, '-p', '--patch', '-i', '--interactive')
              : sub === 'notes' ? subcommandOf(call, ['add', 'edit', 'append']) && free !== undefined && !has(call, ...free)
                : (sub === 'config' && has(call, '-e', '--edit')) || (sub === 'branch' && has(call, '--edit-description'));
  if (opens) report(call, 'high', `opens an editor, which runs commands typed into it: git ${sub}`);
}

export const gitRules: ReadonlyMap<string, CommandRule> = new Map([['git', git]]);
