import type { CommandRule } from './command-invocation.js';
import { hasOption, parseOptions, type OptionSyntax } from './command-options.js';
import { checkUnknownArguments } from './path-access.js';

// Programs that run shell commands typed into them: an editor's `:!cmd`, a debugger's `shell`, a
// multiplexer's new window, a database shell's `\!`. Keystrokes sent to an editor or a pager pass
// as they come (CONTRACT §11 judges lines only for shells and interpreters), so starting one of
// these is as good as an unanalysed command line: high, so that it is confirmed first. (Shells
// and interpreters read from the terminal are rated where their code is, in code-strings.ts;
// `script` and the network shells `ftp`/`sftp` with their own rules. Of the pagers, `less` keeps
// its secure mode.)

const reason = (name: string) => `runs commands typed into it, which are not analysed: ${name}`;

const typedCommands: CommandRule = (invocation) => {
  invocation.engine.report('high', reason(invocation.name));
  checkUnknownArguments(invocation, invocation.args);
  return undefined;
};

/**
 * A database shell is only interactive without a query to run: `psql -c`, `mysql -e`,
 * `sqlite3 file.db "select …"` run it and end.
 */
function databaseShell(batch: readonly string[], syntax: OptionSyntax, maxOperands: number): CommandRule {
  return (invocation) => {
    const parsed = parseOptions(invocation.args, syntax);
    if (hasOption(parsed, ...batch) || parsed.operands.length > maxOperands) {
      invocation.engine.report('medium', `not a known read-only command: ${invocation.name}`);
      checkUnknownArguments(invocation, invocation.args);
      return undefined;
    }
    return typedCommands(invocation);
  };
}

const psql = databaseShell(['-c', '--command', '-f', '--file', '-l', '--list', '-V', '--version'], { valued: 'cdfhpUvoLTPFR', valuedLong: ['--command', '--file', '--dbname', '--host', '--port', '--username'] }, 2);
const mysql = databaseShell(['-e', '--execute', '-V', '--version'], { valued: 'eDhPuSp', valuedLong: ['--execute', '--database', '--host', '--port', '--user'] }, 1);
const sqliteBatch = databaseShell(['-version', '--version', '-cmd'], { valuedLong: ['-cmd', '-separator', '-newline', '-nullvalue'] }, 1);

/**
 * sqlite3's dot-commands given on the line: `.shell` and `.system` run shell code, `.import` and
 * `.output`/`.once` with a `|` run a program, `.load` loads a library, and `load_extension()` or
 * `writefile()` in SQL do the same from a query (CONTRACT §11).
 */
const sqlite: CommandRule = (invocation) => {
  const runsPrograms = invocation.args.some((argument) => {
    const text = argument.value.kind === 'literal' ? argument.value.text : null;
    return text === null || /(^|\n|;)\s*\.(shell|system|import|load|output|once|excel|edit)\b|load_extension|writefile|edit\s*\(/i.test(text);
  });
  if (runsPrograms) invocation.engine.report('high', `runs programs from its commands: ${invocation.name}`);
  return sqliteBatch(invocation);
};

const editorsAndTools = [
  'vi', 'vim', 'nvim', 'view', 'vimdiff', 'gvim', 'rvim', 'vim.basic', 'vim.tiny', 'vim.nox', 'ex', 'ed', 'red', 'emacs', 'nano', 'pico', 'joe', 'jed', 'mg', 'micro', 'kak', 'hx',
  'more', 'most', 'gdb', 'lldb', 'pdb', 'tmux', 'screen', 'mc', 'ranger', 'nnn', 'lf', 'irb', 'pry', 'ghci',
  'R', 'tclsh', 'wish', 'expect', 'mongo', 'mongosh', 'lynx', 'w3m', 'dc', 'ncdu', 'tig', 'aptitude', 'crontab', 'visudo', 'vipw',
  'jshell', 'ipython', 'ipython3', 'jupyter', 'octave', 'gforth', 'guile', 'racket', 'sbcl', 'clisp',
  'ocaml', 'utop', 'erl', 'iex', 'scala', 'groovysh', 'pwsh', 'xonsh', 'nu', 'elvish', 'bpython', 'ptpython',
  'newgrp', 'vimtutor', 'alpine', 'mutt', 'neomutt', 'mail', 'mailx',
];

export const interactiveProgramRules: ReadonlyMap<string, CommandRule> = new Map<string, CommandRule>([
  ...editorsAndTools.map((name): [string, CommandRule] => [name, typedCommands]),
  ['psql', psql], ['mysql', mysql], ['mariadb', mysql], ['sqlite3', sqlite],
]);
