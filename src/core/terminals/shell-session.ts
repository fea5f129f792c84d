import { randomBytes } from 'node:crypto';
import type { IPty, spawn as spawnPty } from 'node-pty';
import { misplacedMounts } from '../sandbox/mount-check.js';
import type { PinnedBinds } from '../sandbox/pinned-binds.js';
import { CommandPipe, type CommandLaunch } from './command-pipe.js';
import { deliverInterrupt, type ForegroundGroup } from './interrupt-delivery.js';
import { commandPreamble, markerSettings, MarkerStream, typeaheadEnd, type Marker } from './marker-stream.js';
import { foregroundReader, type ForegroundReader } from './foreground-reader.js';
import { terminalEchoes } from './terminal-echo.js';
import { commandLineOf, currentDirectoryOf, findDescendant, killSession, pidNamespaceOf, readProcessStat } from './process-tree.js';
import { commandInput } from './shell-input.js';
import { plainText } from './terminal-output.js';

// One persistent interactive bash on its own PTY, reading its commands from a pipe of ours (see
// command-pipe.ts): the PTY carries the programs' output and the keystrokes sent to them, never a
// command. Completion is detected with markers that bash itself prints: one at the head of each
// command line we send, and PROMPT_COMMAND's (with `$?`) when the command has finished. PS1 is
// empty and commands are not typed, so what lies between the two markers is the command's own
// output (and the terminal's echo of keystrokes sent to it, as on any terminal). The markers
// carry a per-session nonce so output cannot collide with them by accident; anything
// security-relevant (the working directory, whether a program holds the terminal) is read from
// /proc instead, because a command can print whatever it likes.

export interface ShellLaunch extends CommandLaunch {
  env: Record<string, string>;
  /** The workspaces the sandbox binds by descriptor: checked once it runs, then closed. */
  pins?: PinnedBinds;
  cwd: string;
  cols?: number;
  rows?: number;
}

export interface RunOutcome {
  /** Plain text (ANSI stripped, `\n` endings) of the command's output. */
  output: string;
  /** The command's exit code, or the shell's when the shell itself ended (128 + signal if killed). */
  exitCode: number;
  /** The shell itself ended (`exit`, killed). */
  shellExited: boolean;
}

type Phase = 'starting' | 'idle' | 'awaiting-start' | 'running' | 'exited';

export type ProcessMembership = { namespace: string } | { session: number };

interface ActiveRun {
  /** An interrupt was asked for; it is delivered once bash has started the command. */
  interrupting: boolean;
  chunks: string[];
  size: number;
  truncated: boolean;
  finish(outcome: { exitCode: number; shellExited: boolean }): void;
}

/** Longest command output kept for one reply; the rest stays in the session log. */
const MAX_RUN_OUTPUT = 1024 * 1024;
const START_TIMEOUT_MS = 10_000;
/** Keystrokes held while a command gets ready for them; more are refused. */
const MAX_EARLY_INPUT = 1024 * 1024;

export class ShellSession {
  private readonly nonce = randomBytes(8).toString('hex');
  private readonly terminal: IPty;
  private readonly commands: CommandPipe;
  private readonly markers: MarkerStream;
  private phase: Phase = 'starting';
  private run: ActiveRun | null = null;
  private shellPid: number | null = null;
  private shellCommandLine: string | null = null;
  private readonly outputListeners = new Set<(raw: string) => void>();
  private readonly exitListeners = new Set<(exitCode: number) => void>();
  private markReady: (() => void) | null = null;
  /** Set by kill(): the PTY may already be closed, so nothing is written any more. */
  private killed = false;
  /** Keystrokes were sent since the last command started: the next one discards what is left. */
  private typeahead = false;
  /** Counts our commands, so that keystrokes meant for one never reach the next. */
  private runNumber = 0;
  /** Keystrokes sent before the command they are for was ready for them. */
  private earlyInput: string[] = [];
  /** The command being started discards leftover keystrokes up to this token first (marker-stream.ts). */
  private discardToken: string | null = null;
  /** The running command has discarded the leftovers (or had none): keystrokes go straight through. */
  private ready = false;
  lastExitCode: number | null = null;

  private constructor(spawn: typeof spawnPty, launch: ShellLaunch, commands: CommandPipe) {
    this.commands = commands;
    this.markers = new MarkerStream(
      this.nonce,
      (raw) => {
        this.output(raw);
      },
      (marker) => {
        this.marker(marker);
      },
    );
    const { file, args } = commands.wrap(launch);
    this.terminal = spawn(file, args, {
      name: 'xterm-256color',
      cols: launch.cols ?? 200,
      rows: launch.rows ?? 50,
      cwd: launch.cwd,
      env: launch.env,
    });
    this.terminal.onData((chunk) => {
      this.markers.push(chunk);
    });
    // Killed by a signal, the shell reports it as the shells do: 128 + its number.
    this.terminal.onExit(({ exitCode, signal }) => {
      this.ended(signal ? 128 + signal : exitCode);
    });
  }

  /** Spawns the shell and resolves once it has taken its settings and is waiting at its prompt. */
  static async start(launch: ShellLaunch): Promise<ShellSession> {
    // Loaded with the first terminal: a service with system commands off never needs it.
    const { spawn } = await import('node-pty');
    const commands = new CommandPipe(launch.sandbox !== null);
    let session: ShellSession;
    try {
      session = new ShellSession(spawn, launch, commands);
    } catch (error) {
      commands.close();
      throw error;
    }
    try {
      await session.configure();
      session.checkMounts(launch.pins);
      return session;
    } catch (error) {
      session.kill();
      throw error;
    } finally {
      // bubblewrap has mounted them (or the start failed): the service's descriptors can go.
      launch.pins?.close();
    }
  }

  /** The sandbox's binds must be where they were meant to go (mount-check.ts); otherwise it is ended. */
  private checkMounts(pins: PinnedBinds | undefined): void {
    if (pins === undefined || this.shellPid === null) return;
    const problem = misplacedMounts(this.shellPid, pins.expectedMounts());
    if (problem !== null) throw new Error(`the sandbox did not come up as intended (a workspace changed while it started?): ${problem}`);
  }

  private async configure(): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('the shell did not start in time'));
      }, START_TIMEOUT_MS);
      this.markReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.exitListeners.add(() => {
        clearTimeout(timer);
        reject(new Error('the shell ended while starting'));
      });
    });
    // History expansion off (`!` stays literal), no history file, no prompt of its own, and less's
    // secure mode (see shell-launch.ts) kept.
    const settings = ['set +H', 'set +o history', 'unset HISTFILE', 'readonly LESSSECURE', ...markerSettings(this.nonce, this.commands.shellPath)];
    this.commands.write(`${settings.join('; ')}\n`);
    await ready;
    this.shellPid = findDescendant(this.terminal.pid, 'bash');
    if (this.shellPid === null) throw new Error('the shell process could not be found');
    this.shellCommandLine = commandLineOf(this.shellPid);
  }

  get exited(): boolean {
    return this.phase === 'exited';
  }

  /** A command of ours is between being sent and its completion marker. */
  get running(): boolean {
    return !this.killed && (this.phase === 'awaiting-start' || this.phase === 'running');
  }

  private get writable(): boolean {
    return !this.killed && this.phase !== 'exited';
  }

  /**
   * Whether a program other than the shell holds the terminal's foreground: then typed text
   * would go to that program, not to the shell, whatever the markers said.
   */
  foregroundProgram(): boolean {
    const groups = this.foregroundGroup();
    return groups === null || groups.foreground !== groups.shell;
  }

  /**
   * What the processes of this terminal share: the shell's own PID namespace under bubblewrap
   * (which also holds jobs that left the session), or else the PTY's session. Null once ended.
   */
  membership(): ProcessMembership | null {
    if (this.phase === 'exited' || this.shellPid === null) return null;
    const namespace = pidNamespaceOf(this.shellPid);
    if (namespace !== null && namespace !== pidNamespaceOf('self')) return { namespace };
    return { session: this.terminal.pid };
  }

  /** The shell's real working directory (null once it has ended). */
  workingDirectory(): string | null {
    return this.shellPid === null ? null : currentDirectoryOf(this.shellPid);
  }

  /** Sends a command; `finished` resolves when the shell reports its exit code (or ends). */
  execute(command: string): { finished: Promise<RunOutcome>; outputSoFar: () => string } {
    if (this.phase !== 'idle' || this.killed) throw new Error(`shell is ${this.killed ? 'killed' : this.phase}`);
    const run: ActiveRun = { interrupting: false, chunks: [], size: 0, truncated: false, finish: () => undefined };
    const finished = new Promise<RunOutcome>((resolve) => {
      run.finish = ({ exitCode, shellExited }) => {
        resolve({ output: runOutput(run), exitCode, shellExited });
      };
    });
    this.run = run;
    this.phase = 'awaiting-start';
    this.runNumber += 1;
    this.earlyInput = [];
    // A fresh token each time: nobody can type the end of a discard in advance.
    this.discardToken = this.typeahead ? randomBytes(8).toString('hex') : null;
    this.ready = this.discardToken === null;
    this.commands.write(commandInput(command, commandPreamble(this.nonce, this.discardToken)));
    this.typeahead = false;
    return { finished, outputSoFar: () => runOutput(run) };
  }

  /**
   * The command that keystrokes would reach now: ours, from when it is sent until it ends (its
   * programs read the terminal; bash never does). Null at the prompt.
   */
  inputTarget(): number | null {
    return this.running ? this.runNumber : null;
  }

  /**
   * Keystrokes for the programs of command `run` (see inputTarget); false once that one has
   * ended. Until bash has started the command and discarded older keystrokes, they wait here
   * (up to 1 MB; false past that).
   */
  input(data: string, run: number): boolean {
    if (this.inputTarget() !== run) return false;
    if (this.phase === 'awaiting-start' || !this.ready) {
      if (this.earlyInput.reduce((size, chunk) => size + chunk.length, data.length) > MAX_EARLY_INPUT) return false;
      this.earlyInput.push(data);
    } else {
      this.typeahead = true;
      this.terminal.write(data);
    }
    return true;
  }

  /** Who reads what is typed into the terminal now (see foreground-reader.ts). */
  foregroundReader(): ForegroundReader {
    return this.shellPid === null || this.phase === 'exited' ? { kind: 'program', program: null } : foregroundReader(this.shellPid);
  }

  /** Whether the terminal shows what is typed now (null when it cannot be read). */
  echoes(): Promise<boolean | null> {
    const device = (this.terminal as IPty & { ptsName?: string }).ptsName;
    return typeof device === 'string' && this.phase !== 'exited' ? terminalEchoes(device) : Promise.resolve(null);
  }

  /** The name of the program in the terminal's foreground (the shell's own for a builtin). */
  foregroundProgramName(): string | null {
    const groups = this.foregroundGroup();
    return groups === null ? null : (readProcessStat(groups.foreground)?.comm ?? null);
  }

  /**
   * Ctrl-C for our running command (see interrupt-delivery.ts). Before bash has read the line a
   * signal would hit bash itself, so it waits for the start marker.
   */
  interrupt(): void {
    const run = this.run;
    if (!this.writable || !run || run.interrupting) return;
    run.interrupting = true;
    if (this.phase === 'running') this.interruptRun(run);
  }

  resize(cols: number, rows: number): void {
    if (this.writable) this.terminal.resize(cols, rows);
  }

  /**
   * Ends the shell and everything it started. Every job shares the PTY's session (job control
   * only gives each its own process group); under bubblewrap, ending the outer process also
   * ends the PID namespace and so anything that left the session.
   */
  kill(): void {
    // Once ended, the pid and session id may already belong to an unrelated process.
    if (this.killed || this.phase === 'exited') return;
    this.killed = true;
    this.commands.close();
    killSession(this.terminal.pid);
    try {
      this.terminal.kill('SIGKILL');
    } catch {
      // Already gone.
    }
  }

  /** A line of the service's own in the terminal's output (why it ends, say), shown to its viewers. */
  notice(text: string): void {
    if (this.phase !== 'exited') this.output(`\r\n[${text}]\r\n`);
  }

  onOutput(listener: (raw: string) => void): () => void {
    this.outputListeners.add(listener);
    return () => this.outputListeners.delete(listener);
  }

  onExit(listener: (exitCode: number) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  private interruptRun(run: ActiveRun): void {
    deliverInterrupt({
      foregroundGroup: () => this.foregroundGroup(),
      shellCommandLine: this.shellCommandLine,
      stillRunning: () => this.run === run && this.running,
    });
  }

  /** The terminal's foreground process group, its leader's command line, and the shell's own group. */
  private foregroundGroup(): ForegroundGroup | null {
    const stat = this.shellPid === null ? null : readProcessStat(this.shellPid);
    if (stat === null) return null;
    return { foreground: stat.tpgid, shell: stat.pgrp, program: commandLineOf(stat.tpgid) };
  }

  private marker(marker: Marker): void {
    if (marker.kind === 'flush') {
      // Answered once, for the discard this service asked for: behind every keystroke written before.
      if (this.phase === 'running' && this.discardToken !== null && this.writable) this.terminal.write(typeaheadEnd(this.discardToken));
      this.discardToken = null;
      return;
    }
    if (marker.kind === 'ready') {
      if (this.phase !== 'running' || this.ready) return;
      this.becomeReady();
      return;
    }
    if (marker.kind === 'started') {
      if (this.phase !== 'awaiting-start') return;
      this.phase = 'running';
      if (this.run?.interrupting) this.interruptRun(this.run);
      if (this.ready) this.becomeReady();
      return;
    }
    if (this.phase === 'starting') {
      this.phase = 'idle';
      this.markReady?.();
      return;
    }
    // Only a prompt after our start marker ends our command; any other (a Ctrl-C at an idle
    // prompt, arriving late) is ignored.
    if (this.phase !== 'running' || !this.run) return;
    if (this.shellPid !== null && this.commands.isInputOf(this.shellPid) === false) {
      // A command left the shell reading something other than our pipe. The shell's prompt
      // function has already killed it unless a command disarmed that (it runs in the shell, so a
      // sourced script could): then the shell must not run another line either.
      this.output('\r\n[terminal closed: a command changed where the shell reads its commands from]\r\n');
      this.kill();
      return;
    }
    const run = this.run;
    this.lastExitCode = marker.exitCode;
    this.earlyInput = [];
    this.run = null;
    this.phase = 'idle';
    run.finish({ exitCode: marker.exitCode, shellExited: false });
  }

  /** The command takes keystrokes now: those that waited go first. */
  private becomeReady(): void {
    this.ready = true;
    const early = this.earlyInput.join('');
    this.earlyInput = [];
    if (early !== '') this.input(early, this.runNumber);
  }

  private output(raw: string): void {
    if (this.phase === 'starting') return;
    const run = this.run;
    // Before the command is ready, the terminal may still echo leftover keystrokes on their way
    // to the discard: the terminal shows them, the command's own output does not have them.
    if (run && this.phase === 'running' && this.ready) {
      run.chunks.push(raw);
      run.size += raw.length;
      while (run.size > MAX_RUN_OUTPUT && run.chunks.length > 1) {
        run.size -= run.chunks.shift()?.length ?? 0;
        run.truncated = true;
      }
    }
    for (const listener of this.outputListeners) listener(raw);
  }

  private ended(exitCode: number): void {
    if (this.phase === 'exited') return;
    // Jobs left running by a shell that ended on its own (`exit`) would otherwise be orphans.
    killSession(this.terminal.pid);
    this.commands.close();
    this.markers.flush();
    this.phase = 'exited';
    const run = this.run;
    this.run = null;
    if (run) {
      this.lastExitCode = exitCode;
      run.finish({ exitCode, shellExited: true });
    }
    for (const listener of this.exitListeners) listener(exitCode);
  }
}

function runOutput(run: ActiveRun): string {
  const text = plainText(run.chunks.join('')).replace(/\n+$/, '');
  return run.truncated ? `[earlier output truncated]\n${text}` : text;
}
