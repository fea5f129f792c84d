import { row, riskTable, sequenceTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('definitions that change what later lines run', [
  // Definitions that change what later lines run.
  row("alias ls='rm -rf ~'", 'critical', 'removes the home directory'),
  row("alias ll='ls -la'", 'medium', 'defines an alias: ll'),
  row('ls() { rm -rf ~; }', 'critical', 'removes the home directory'),
  row('ls() { command ls -la; }', 'high', 'function shadows a command: ls'),
  row("trap 'rm -rf ~' EXIT", 'critical', 'removes the home directory'),
  row("trap 'echo bye' EXIT", 'high', 'sets a trap handler: EXIT'),
  row('bomb(){ bomb|bomb& }; bomb', 'critical', 'fork bomb: bomb'),
  row('f(){ f; }; f', 'high', 'function calls itself: f'),
  row('enable -n cd', 'high', 'changes shell builtins: enable'),
  row('hash -p /tmp/x ls', 'high', 'changes what a command name runs'),
  row('set -H', 'high', 're-enables history expansion'),
]);

// CONTRACT §11 "Shell state": each first line leaves something in the terminal's shell; the next
// line is judged through it. Before, each first step was medium and each second step low.
sequenceTable('what earlier lines left in the shell', [
  [row("BASH_ALIASES[ls]='touch X; ls'", 'high', 'alias shadows a command: ls'), row('ls', 'medium', 'changes inside the workspaces: X')],
  [row("BASH_ALIASES[ll]='rm -r src'", 'high', 'recursive delete: src'), row('ll', 'high', 'recursive delete: src')],
  [row("alias ll='ls -la'", 'medium', 'defines an alias: ll'), row('ll', 'low', 'runs an alias: ll')],
  [row("alias ll='ls -la'", 'medium', 'defines an alias: ll'), row('ll /etc', 'high', 'reads outside the workspaces: /etc')],
  [row("alias go='cd /etc'", 'high', 'reads outside the workspaces: /etc'), row('go && cat passwd', 'high', 'reads outside the workspaces: passwd')],
  [row("alias sudo='sudo '", 'high', 'alias shadows a command: sudo'), row('sudo ll', 'high', 'alias ending in a blank expands the next word too')],
  [row("alias x='ls'", 'medium', 'defines an alias: x'), row('unalias x', 'medium', 'unalias'), row('x', 'medium', 'not a known read-only command: x')],
  [row('BASH_CMDS[git]=./evil', 'medium', 'sets a shell variable: BASH_CMDS'), row('git status', 'medium', 'runs a script: ./evil')],
  [row('BASH_CMDS[ls]=/usr/bin/rm', 'medium', 'sets a shell variable: BASH_CMDS'), row('ls -r src', 'high', 'recursive delete: src')],
  [row('hash -p ./evil git', 'high', 'changes what a command name runs: hash -p'), row('git status', 'medium', 'runs a script: ./evil')],
  [row('hash -p ./evil git', 'high', 'changes what a command name runs'), row('hash -r', 'medium', 'hash'), row('git status', 'low', 'read-only inspection')],
  [row('f() { rm -r src; }', 'high', 'recursive delete: src'), row('f', 'high', 'recursive delete: src')],
  [row('f() { ls; }', 'medium', 'defines a function: f'), row('f', 'low', 'runs a function defined earlier: f')],
  [row('f() { ls; }', 'medium', 'defines a function: f'), row('unset -f f', 'medium', 'unset'), row('f', 'medium', 'not a known read-only command: f')],
  [row("export GIT_PAGER='touch x; cat'", 'medium', 'declares shell variables: export'), row('git log -1', 'medium', 'changes inside the workspaces: x')],
  [row("export GIT_PAGER='rm -r src; cat'", 'medium', 'declares shell variables: export'), row('git log -1', 'high', 'recursive delete: src')],
  [row('export GIT_PAGER="$X"', 'medium', 'declares shell variables: export'), row('git log -1', 'high', "git may run the environment's GIT_PAGER, which cannot be known")],
  [row('export PAGER=cat', 'medium', 'declares shell variables: export'), row('git log', 'low', "git may run the environment's PAGER: cat")],
  [row('export PAGER=vim', 'medium', 'declares shell variables: export'), row('man ls', 'high', 'runs commands typed into it, which are not analysed: vim')],
  [row('EDITOR=vi', 'medium', 'sets a shell variable: EDITOR'), row("git commit -m x", 'high', 'runs commands typed into it, which are not analysed: vi')],
  [row('export GIT_DIR=/etc', 'medium', 'declares shell variables: export'), row('git status', 'high', "the environment's GIT_DIR changes what git runs")],
  [row('export GIT_AUTHOR_NAME=me', 'medium', 'declares shell variables: export'), row('git log', 'low', 'read-only inspection')],
  [row('export PYTHONPATH=/var/tmp/x', 'medium', 'declares shell variables: export'), row('python3 tool.py', 'high', "the environment's PYTHONPATH changes what python3 runs")],
  [row('export GIT_PAGER=x', 'medium', 'declares shell variables: export'), row('unset GIT_PAGER', 'medium', 'unset'), row('git log', 'low', 'read-only inspection')],
  [row('set -k', 'medium', 'set'), row('git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x', 'high', 'dangerous environment variable: GIT_CONFIG_COUNT')],
  [row('set -k', 'medium', 'set'), row('git log GIT_PAGER=vim', 'high', 'runs commands typed into it, which are not analysed: vim')],
  [row('set -o keyword', 'medium', 'set'), row('set +k', 'medium', 'set'), row('git log GIT_PAGER=vim', 'low', 'read-only inspection')],
  [row('source ./env.sh', 'high', "runs a script inside the terminal's own shell"), row('ls', 'high', 'every line is high until the terminal is replaced')],
  [row('eval "$x"', 'high', 'runs code that cannot be analysed: eval'), row('pwd', 'high', 'every line is high until the terminal is replaced'), row('echo hi', 'high', 'every line is high')],
  [row('eval ls', 'low', 'read-only inspection'), row('ls', 'low', 'read-only inspection')],
  [row('declare -n ref=x', 'high', 'a name reference'), row('ls', 'high', 'every line is high')],
  [row('shopt -s expand_aliases', 'medium', 'shopt'), row('ls', 'low', 'read-only inspection')],
  [row('shopt -u sourcepath extdebug', 'high', 'shopt -u extdebug'), row('ls', 'high', 'every line is high')],
  [row('IFS=/', 'high', 'dangerous environment variable: IFS'), row('ls', 'high', 'every line is high')],
  [row("trap 'touch x' DEBUG", 'high', 'sets a trap handler: DEBUG'), row('ls', 'high', 'the shell runs trap code between commands: DEBUG')],
  [row("trap 'touch x' DEBUG", 'high', 'sets a trap handler'), row('trap - DEBUG', 'high', 'the shell runs trap code between commands: DEBUG'), row('ls', 'low', 'read-only inspection')],
  [row('if true; then alias l=ls; fi', 'medium', 'defines an alias: l'), row('l', 'low', 'runs an alias: l')],
  [row('true || f() { rm -r src; }', 'high', 'recursive delete: src'), row('f', 'high', 'recursive delete: src')],
  [row('(alias l="rm -r src")', 'high', 'recursive delete: src'), row('l', 'medium', 'not a known read-only command: l')],
]);

sequenceTable('definitions named like builtins and keywords, and enable', [
  [row('builtin() { :; }', 'high', 'function named like a shell builtin: builtin'), row('builtin printf x', 'low', 'runs a function defined earlier: builtin')],
  [row('printf() { touch x; }', 'high', 'function named like a shell builtin: printf')],
  [row("alias if='rm -r src; if'", 'high', 'alias named like a shell keyword: if')],
  [row("alias cd='cd /etc'", 'high', 'alias named like a shell builtin: cd')],
  [row("BASH_ALIASES[command]='touch x'", 'high', 'alias named like a shell builtin: command')],
  [row('enable -n echo', 'high', 'changes shell builtins: enable'), row('echo hi', 'high', 'every line is high')],
  [row('enable -f ./x.so x', 'high', 'changes shell builtins: enable')],
]);

// What a line may or may not have done: the state keeps both possibilities.
sequenceTable('lines that may not have done what they say', [
  [row("export GIT_PAGER='vim'", 'medium', 'export'), row('false && unset GIT_PAGER', 'medium', 'unset'), row('git log', 'high', 'vim')],
  [row("alias l='rm -r src'", 'high', 'recursive delete: src'), row('test -f x || unalias l', 'medium', 'unalias'), row('l', 'high', 'recursive delete: src')],
  [row("if test -f x; then alias l='ls'; else alias l='ls -la'; fi", 'medium', 'defines an alias: l'), row('l', 'high', 'runs an alias whose text cannot be known: l')],
  [row('if test -f x; then f() { ls; }; else f() { pwd; }; fi', 'medium', 'defines a function: f'), row('f', 'high', 'runs a function whose body cannot be known: f')],
  [row('BASH_CMDS[git]="$X"', 'high', 'remembers a path that cannot be known for git'), row('git status', 'high', 'runs a path the shell remembers for git, which cannot be known')],
  [row('alias l="$X"', 'high', 'an alias that cannot be resolved'), row('l', 'high', 'every line is high until the terminal is replaced')],
  [row('BASH_ALIASES[l]="$X"', 'high', 'defines an alias whose text cannot be known: l'), row('l', 'high', 'runs an alias whose text cannot be known: l')],
]);

// PROMPT_COMMAND is code the shell runs after every line: each later line is judged with it.
sequenceTable('PROMPT_COMMAND', [
  [row('PROMPT_COMMAND=true', 'high', 'dangerous environment variable: PROMPT_COMMAND'), row('true', 'low', 'the shell runs PROMPT_COMMAND after the line: true')],
  [row("PROMPT_COMMAND='rm -r src'", 'high', 'recursive delete: src'), row('pwd', 'high', 'recursive delete: src')],
  [row('PROMPT_COMMAND="$X"', 'high', 'dangerous environment variable'), row('pwd', 'high', 'PROMPT_COMMAND after the line, and its code cannot be known')],
  [row("PROMPT_COMMAND='touch x'", 'high', 'dangerous environment variable'), row('unset PROMPT_COMMAND', 'medium', 'unset'), row('pwd', 'low', 'read-only inspection')],
]);

// Names set by builtins rather than by assignments (the red-team pass after typed input).
sequenceTable('state set through printf -v, read, mapfile and quoted declarations', [
  [row('printf -v "BASH_CMDS[ls]" /bin/rm', 'high', 'remembers a path that cannot be known for ls'), row('ls -r src', 'high', 'runs a path the shell remembers for ls, which cannot be known')],
  [row('printf -v "BASH_ALIASES[ll]" "rm -r"', 'high', 'defines an alias whose text cannot be known: ll'), row('ll src', 'high', 'runs an alias whose text cannot be known: ll')],
  [row('typeset "BASH_ALIASES[ls]=rm -r"', 'high', 'alias shadows a command: ls'), row('ls src', 'high', 'recursive delete: src')],
  [row('declare "BASH_CMDS[git]=./evil"', 'medium', 'declares shell variables'), row('git status', 'medium', 'runs a script: ./evil')],
  [row('printf -v GIT_PAGER "rm -r x #"', 'medium', 'sets a shell variable: GIT_PAGER'), row('git log', 'high', "git may run the environment's GIT_PAGER, which cannot be known")],
  [row('read -r EDITOR < README.md', 'medium', 'sets a shell variable: EDITOR'), row('git commit', 'high', "git may run the environment's EDITOR, which cannot be known")],
  [row('mapfile -t PYTHONPATH < README.md', 'medium', 'sets a shell variable: PYTHONPATH'), row('python3 tool.py', 'high', "the environment's PYTHONPATH changes what python3 runs")],
  [row('printf -v PATH /x', 'high', 'dangerous environment variable: PATH'), row('ls', 'high', "the environment's PATH changes what ls runs")],
]);
