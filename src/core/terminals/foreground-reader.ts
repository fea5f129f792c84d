import { readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { argumentsOf, currentDirectoryOf, executableOf, readProcessStat, sessionMembers } from './process-tree.js';

// Who reads what is typed into a terminal (CONTRACT §11, "Typed input"), from the kernel's view:
// the processes of the terminal's foreground process group, what file each runs (its exe link,
// fixed at exec, not its name, which a process may change) and its arguments. A shell or an
// interpreter reading commands from the terminal gets what is typed a line at a time, judged;
// anything else (an editor, a pager, a program's own prompt) gets keystrokes as they come.

export type ForegroundReader =
  /** An interactive shell: each line is judged as an execute, in this shell's own state and folder. */
  | { kind: 'shell'; program: string; pid: number; key: string }
  /** An interpreter or a program that runs the commands typed into it: each line is high. */
  | { kind: 'interpreter'; program: string }
  /** Any other program: keystrokes pass through. */
  | { kind: 'program'; program: string | null };

const SHELLS: ReadonlySet<string> = new Set([
  'bash', 'rbash', 'sh', 'dash', 'ash', 'zsh', 'ksh', 'ksh93', 'mksh', 'oksh', 'loksh', 'pdksh', 'yash', 'posh', 'fish', 'tcsh', 'csh',
  'elvish', 'nu', 'xonsh', 'pwsh',
]);

/** Interpreters reading code from the terminal when they have nothing else to run (a REPL). */
const INTERPRETERS = /^(python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby[0-9.]*|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*|wish[0-9.]*|guile[0-9.]*|julia|ocaml|sbcl|clisp|racket|erl|scala)$/;

/** Programs whose every line typed into them is a command, whatever their arguments. */
const COMMAND_READERS = /^(irb|pry|ghci|ghc|jshell|R|gdb|lldb|pdb|bc|dc|expect|psql|mysql|mariadb|sqlite3|mongo|mongosh|redis-cli|ipython[0-9]*|bpython|ptpython|iex|gforth|octave)$/;

/** Options that give a shell or an interpreter its code on the line, so that it reads none typed. */
const CODE_OPTIONS = /^-(c|e|E|m|p|-eval|-print|-command|-batch|batch)$/;

/** Options whose value is the next argument, by program family: that value is not a script. */
const VALUED_OPTIONS: readonly { family: RegExp; options: ReadonlySet<string> }[] = [
  { family: /^(bash|rbash|sh|dash|ash|zsh|ksh|ksh93|mksh|oksh|loksh|pdksh|yash|posh)$/, options: new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file']) },
  { family: /^(python|pypy)/, options: new Set(['-W', '-X', '-Q']) },
  { family: /^(node|nodejs)$/, options: new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--env-file', '--title']) },
  { family: /^ruby/, options: new Set(['-I', '-r', '-E', '-C', '-F']) },
  { family: /^php/, options: new Set(['-c', '-d', '-z']) },
  { family: /^(lua|luajit)/, options: new Set(['-l']) },
];
interface Candidate {
  pid: number;
  name: string;
  args: readonly string[];
}

/**
 * What kind of reader holds the foreground of the terminal whose shell is `servicePid`: its
 * foreground group's processes, the service's own shell excepted (it reads commands from the
 * service's pipe, never from the terminal, and a builtin it runs reads data).
 */
export function foregroundReader(servicePid: number): ForegroundReader {
  const shell = readProcessStat(servicePid);
  if (shell === null) return { kind: 'program', program: null };
  const group = shell.tpgid;
  const candidates: Candidate[] = [];
  for (const pid of sessionMembers(shell.session)) {
    if (pid === servicePid) continue;
    const stat = readProcessStat(pid);
    if (stat?.pgrp !== group) continue;
    const args = argumentsOf(pid) ?? [];
    candidates.push({ pid, name: programName(executableOf(pid), args), args });
  }
  const nested = candidates.find((candidate) => SHELLS.has(candidate.name) && readsCommands(candidate, true));
  if (nested !== undefined) {
    const start = readProcessStat(nested.pid)?.startTime ?? 0;
    return { kind: 'shell', program: nested.name, pid: nested.pid, key: `${nested.pid}:${start}` };
  }
  const interpreter = candidates.find((candidate) =>
    COMMAND_READERS.test(candidate.name) || (INTERPRETERS.test(candidate.name) && readsCommands(candidate, false)));
  if (interpreter !== undefined) return { kind: 'interpreter', program: interpreter.name };
  const leader = candidates.find((candidate) => candidate.pid === group) ?? candidates[0];
  return { kind: 'program', program: leader?.name ?? shell.comm };
}

/** Where a nested shell is, to judge the lines typed into it. */
export function readerDirectory(reader: ForegroundReader & { kind: 'shell' }): string | null {
  return currentDirectoryOf(reader.pid);
}

/**
 * The program a process runs: the file's name, or for a multi-call binary (busybox) the applet
 * its first argument names.
 */
function programName(executable: string | null, args: readonly string[]): string {
  const file = executable === null ? (args[0] ?? '') : executable;
  const name = posix.basename(file);
  if (name === 'busybox' || name === 'toybox') return posix.basename(args[0] ?? name).replace(/^-/, '');
  return name;
}

/**
 * Whether a shell or interpreter reads its commands from the terminal: no code given with -c or
 * -e, no script to run, or an explicit -i (interactive) or -s (commands from standard input).
 * A script is an operand naming a file that exists; anything else (an option's value this table
 * does not know, say) leaves it reading the terminal, so an unknown form is judged, not passed.
 */
function readsCommands(candidate: Candidate, shell: boolean): boolean {
  const { args, name } = candidate;
  if (!shell && /^python/.test(name) && inspectsAfterScript(candidate.pid)) return true;
  const valued = VALUED_OPTIONS.find(({ family }) => family.test(name))?.options ?? new Set<string>();
  for (let index = 1; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg === '--') return !isScript(candidate.pid, args[index + 1]);
    if (valued.has(arg)) {
      index += 1;
      continue;
    }
    if (arg === '-i' || arg === '--interactive' || (shell && /^-[a-zA-Z]*[is][a-zA-Z]*$/.test(arg))) return true;
    if (CODE_OPTIONS.test(arg) || (shell && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg))) return false;
    if (arg.startsWith('-') || arg.startsWith('+')) continue;
    if (isScript(candidate.pid, arg)) return false;
  }
  return true;
}

/** An operand a program would run: a file that exists where the program is. */
function isScript(pid: number, operand: string | undefined): boolean {
  if (operand === undefined || operand === '' || operand === '-') return false;
  const directory = currentDirectoryOf(pid);
  if (directory === null) return false;
  try {
    // Seen through the process's own root: its /tmp is not the service's.
    return statSync(`/proc/${pid}/root${posix.resolve(directory, operand)}`).isFile();
  } catch {
    return false;
  }
}

/** PYTHONINSPECT in a python's environment: it reads the terminal once its script has run. */
function inspectsAfterScript(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').some((entry) => /^PYTHONINSPECT=./.test(entry));
  } catch {
    return false;
  }
}
