import { readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { knownProgramOf } from './executable-identity.js';
import { argumentsOf, childrenOf, currentDirectoryOf, executableOf, readProcessStat, sessionMembers } from './process-tree.js';

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
  /** The program's own arguments, its name first (a loader's or a multi-call binary's shifted off). */
  args: readonly string[];
}

/** How deep below the foreground, and how far above it, a reader is looked for. */
const MAX_DESCENDANT_DEPTH = 4;
const MAX_DESCENDANTS = 64;
const MAX_ANCESTORS = 16;

/**
 * What kind of reader holds the foreground of the terminal whose shell is `servicePid`. The
 * foreground group's processes come first (the service's own shell excepted: it reads commands
 * from the service's pipe, never from the terminal). A shell or interpreter found below them (a
 * shell behind `script` or `setsid`) or above them (a nested shell whose child holds the terminal
 * now: what is typed may be left for that shell to read when the child ends) is the reader too,
 * so its lines are judged.
 */
export function foregroundReader(servicePid: number): ForegroundReader {
  const shell = readProcessStat(servicePid);
  if (shell === null) return { kind: 'program', program: null };
  const group = shell.tpgid;
  const members = sessionMembers(shell.session).filter((pid) => pid !== servicePid && readProcessStat(pid)?.pgrp === group);
  const foreground = members.map(candidateOf);
  const below = descendantsOf(members).filter((pid) => pid !== servicePid).map(candidateOf);
  const above = ancestorsOf(group, servicePid).map(candidateOf);
  for (const candidates of [foreground, below, above]) {
    const reader = readerAmong(candidates);
    if (reader !== null) return reader;
  }
  const leader = foreground.find((candidate) => candidate.pid === group) ?? foreground[0];
  return { kind: 'program', program: leader?.name ?? shell.comm };
}

function readerAmong(candidates: readonly Candidate[]): ForegroundReader | null {
  const nested = candidates.find((candidate) => SHELLS.has(candidate.name) && readsCommands(candidate, true));
  if (nested !== undefined) {
    const start = readProcessStat(nested.pid)?.startTime ?? 0;
    return { kind: 'shell', program: nested.name, pid: nested.pid, key: `${String(nested.pid)}:${String(start)}` };
  }
  const interpreter = candidates.find((candidate) =>
    COMMAND_READERS.test(candidate.name) || (INTERPRETERS.test(candidate.name) && readsCommands(candidate, false)));
  return interpreter === undefined ? null : { kind: 'interpreter', program: interpreter.name };
}

function candidateOf(pid: number): Candidate {
  const args = argumentsOf(pid) ?? [];
  return { pid, ...programOf(pid, executableOf(pid), args) };
}

/** Processes started below `roots`, breadth first, in any session (script and setsid make new ones). */
function descendantsOf(roots: readonly number[]): number[] {
  const found: number[] = [];
  let level = [...roots];
  for (let depth = 0; depth < MAX_DESCENDANT_DEPTH && level.length > 0 && found.length < MAX_DESCENDANTS; depth += 1) {
    level = level.flatMap(childrenOf).slice(0, MAX_DESCENDANTS - found.length);
    found.push(...level);
  }
  return found;
}

/** The parents of the foreground group's leader, up to (not including) the service's shell. */
function ancestorsOf(pid: number, servicePid: number): number[] {
  const found: number[] = [];
  let current = readProcessStat(pid)?.ppid;
  for (let step = 0; current !== undefined && current > 1 && current !== servicePid && step < MAX_ANCESTORS; step += 1) {
    found.push(current);
    current = readProcessStat(current)?.ppid;
  }
  return current === servicePid ? found : [];
}

/** Where a nested shell is, to judge the lines typed into it. */
export function readerDirectory(reader: ForegroundReader & { kind: 'shell' }): string | null {
  return currentDirectoryOf(reader.pid);
}

const LOADER = /^ld(-linux[^/]*|-musl[^/]*)?\.so(\.\d+)?$/;

function isKnownKind(name: string): boolean {
  return SHELLS.has(name) || INTERPRETERS.test(name) || COMMAND_READERS.test(name);
}

/**
 * The program a process runs and its own arguments: the file the kernel ran, or for the dynamic
 * loader run by hand (`ld-linux.so /bin/bash`) and a multi-call binary (`busybox sh`) the program
 * named after it. A file that is not known by its name is looked up by its build id, so that a
 * renamed copy of a shell is still that shell.
 */
function programOf(pid: number, executable: string | null, args: readonly string[]): { name: string; args: readonly string[] } {
  const file = executable ?? args[0] ?? '';
  const base = posix.basename(file);
  if (LOADER.test(base)) {
    const at = args.findIndex((arg, index) => index > 0 && !arg.startsWith('-'));
    if (at > 0) return programOf(pid, args[at] ?? null, args.slice(at));
  }
  if (base === 'busybox' || base === 'toybox') {
    const applet = posix.basename(args[0] ?? base).replace(/^-/, '');
    return applet === base ? { name: posix.basename(args[1] ?? base), args: args.slice(1) } : { name: applet, args };
  }
  if (isKnownKind(base)) return { name: base, args };
  const copy = knownProgramOf(executable === null ? file : `/proc/${String(pid)}/exe`, isKnownKind);
  return { name: copy ?? base, args };
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
