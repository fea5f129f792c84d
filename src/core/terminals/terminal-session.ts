import { AppError } from '../errors/app-error.js';
import { cloneShellState, initialShellState, mergeShellStates, unfollowable, type ShellState } from '../security/shell-state.js';
import type { ForegroundReader } from './foreground-reader.js';
import { TypedLines, TypedRecord } from './typed-lines.js';
import type { ProcessMembership, ShellSession } from './shell-session.js';
import { ansiCQuoted } from './shell-input.js';
import type { TerminalConfinement } from './terminal-confinement.js';
import { OutputLog } from './terminal-output.js';

/** CONTRACT §3: `running` is an idle shell, `busy` a command running, `exited` kept until DELETE. */
export type TerminalStatus = 'running' | 'busy' | 'exited';

export type RunResult =
  | { kind: 'completed'; output: string; exitCode: number }
  | { kind: 'timedOut'; output: string }
  | { kind: 'started' };

/** Lines kept for `GET …/output` (its `lines` query allows up to this many). */
export const OUTPUT_LOG_LINES = 10_000;

/** What the terminal's output says when the service ends it. */
const endNotices: Record<string, string> = {
  workspace_removed: 'a workspace it could write was removed',
  process_limit: 'it stayed at its process limit (SANDBOX_PROCESSES)',
};

/** How long the shell may take to change folder before a confirmed command. */
const MOVE_TIMEOUT_MS = 5000;

/** Typed lines held for confirmation that a terminal remembers. */
const MAX_HELD_INPUTS = 100;

/** Raw output kept for a terminal WebSocket's replay on connect (ANSI and all). */
const RECENT_RAW_CHARS = 64 * 1024;

/** A line typed into a nested shell or an interpreter, held for confirmation (CONTRACT §11). */
export interface HeldInput {
  line: string;
  /** The reader it was typed into: it runs only if that one still reads the terminal. */
  reader: string;
  run: number;
}

/** Who keystrokes sent now would reach (see TerminalSession.inputTarget). */
export interface InputTarget {
  /** Which of this terminal's commands is running. */
  run: number;
  command: string;
  /** The program holding the terminal, as the kernel names it. */
  program: string | null;
  /** No keystrokes were sent to this command before. */
  first: boolean;
}

export interface TerminalInit {
  id: string;
  ownerId: string;
  /** The directory the shell started in (a real path). */
  initialDirectory: string;
  /** What `~` means inside this shell. */
  home: string;
  shell: ShellSession;
  /** The folders its sandbox made writable: removing one of these workspaces ends the terminal. */
  writable?: readonly string[];
  /** Its cgroup and egress proxy, released when the shell ends. */
  confinement?: TerminalConfinement;
  /** What the shell starts with that later lines are judged through (its environment's variables). */
  shellState?: ShellState;
}

export interface RunOptions {
  timeoutMs: number;
  waitForCompletion: boolean;
  /**
   * The shell's state once the command has run, as its judgement found it (CONTRACT §11); null
   * when it could not be judged, after which no line of this terminal can be.
   */
  stateAfter: ShellState | null;
}

/** A user's terminal: one persistent shell plus what the API reports about it. */
export class TerminalSession {
  readonly id: string;
  readonly ownerId: string;
  readonly initialDirectory: string;
  readonly home: string;
  readonly writable: readonly string[];
  readonly createdAt = new Date();
  /** Why the service ended the terminal, when it did so for a reason of its own. */
  endReason: string | null = null;
  private readonly confinement: TerminalConfinement | undefined;
  readonly log = new OutputLog(OUTPUT_LOG_LINES);
  lastActivity = new Date();
  private readonly shell: ShellSession;
  private readonly commandEndListeners = new Set<(exitCode: number) => void>();
  private readonly statusListeners = new Set<(status: TerminalStatus) => void>();
  private recent = '';
  /** Set from an execute's first check until its command is sent, held or refused. */
  private reserved = false;
  private lastKnownDirectory: string;
  /** The command last sent to the shell, and the last one that was sent keystrokes. */
  private lastCommand = '';
  /**
   * What earlier commands left in the shell (CONTRACT §11, "Shell state"), kept by the service
   * from the lines it judged and sent, never read back from the shell, which a command can forge.
   */
  private state: ShellState;
  private lastInputRun = 0;
  /** What was typed for the reader named `owner` and not yet ended by Enter. */
  private typed: { owner: string; lines: TypedLines } | null = null;
  /** Lines typed into other programs, for the audit, per command run. */
  private record: { run: number; lines: TypedRecord } | null = null;
  /** The state of each nested shell typed lines were judged for, by its pid and start time. */
  private readonly nestedStates = new Map<string, ShellState>();
  private readonly heldInputs = new Map<string, HeldInput>();

  constructor(init: TerminalInit) {
    this.id = init.id;
    this.ownerId = init.ownerId;
    this.initialDirectory = init.initialDirectory;
    this.lastKnownDirectory = init.initialDirectory;
    this.home = init.home;
    this.shell = init.shell;
    this.writable = init.writable ?? [];
    this.confinement = init.confinement;
    this.state = init.shellState ?? initialShellState();
    this.shell.onOutput((raw) => {
      this.log.append(raw);
      this.recent = (this.recent + raw).slice(-RECENT_RAW_CHARS);
      this.touch();
    });
    this.shell.onExit(() => {
      void this.confinement?.release();
      this.log.flush();
      this.touch();
      this.announce('exited');
    });
  }

  get status(): TerminalStatus {
    // Ended by the service: exited at once, not only when the kernel has reaped the shell.
    if (this.shell.exited || this.endReason !== null) return 'exited';
    return this.reserved || this.shell.running ? 'busy' : 'running';
  }

  get lastExitCode(): number | null {
    return this.shell.lastExitCode;
  }

  /** The shell's current directory as the kernel reports it; null when unknown (for the analysis). */
  currentDirectory(): string | null {
    const directory = this.shell.workingDirectory();
    if (directory !== null) this.lastKnownDirectory = directory;
    return directory;
  }

  /** Where the shell is now, or was last seen once it has ended (for display). */
  workingDirectory(): string {
    return this.currentDirectory() ?? this.lastKnownDirectory;
  }

  /** What this terminal's processes share (see ShellSession.membership). */
  membership(): ProcessMembership | null {
    return this.shell.membership();
  }

  /** Where the shell started and where it was last seen: a workspace holding either is in use. */
  directories(): string[] {
    return [this.initialDirectory, this.workingDirectory()];
  }

  /**
   * Claims the shell for one execute, synchronously, so two requests racing through the
   * asynchronous risk analysis cannot both send a command. A program holding the foreground
   * (a command that outlived its timeout, an interactive program) also makes the terminal busy.
   */
  reserve(): void {
    if (this.shell.exited) {
      throw AppError.invalid('The terminal has exited; create a new one', { reason: 'exited' });
    }
    if (this.reserved || this.shell.running || this.shell.foregroundProgram()) {
      throw AppError.invalid('The terminal is busy with another command', { reason: 'busy' });
    }
    this.reserved = true;
  }

  release(): void {
    this.reserved = false;
  }

  /**
   * Takes the reserved shell to `directory` before a command is sent there (a confirmation runs
   * where it was judged). True once the kernel reports the shell there: a `cd` a command has
   * redefined, or a folder that is gone, answers false and nothing is sent.
   */
  async moveTo(directory: string): Promise<boolean> {
    if (this.currentDirectory() === directory) return true;
    let started: ReturnType<ShellSession['execute']>;
    try {
      started = this.shell.execute(`builtin cd -- ${ansiCQuoted(directory)}`);
    } catch {
      return false;
    }
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      started.finished,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => {
          resolve(null);
        }, MOVE_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    return outcome !== null && !outcome.shellExited && this.currentDirectory() === directory;
  }

  /** What earlier commands left in the shell, for judging the next line. */
  shellState(): ShellState {
    return this.state;
  }

  /** Runs a reserved command; past `timeoutMs` it answers with the output so far and keeps running. */
  async run(command: string, options: RunOptions): Promise<RunResult> {
    let started: ReturnType<ShellSession['execute']>;
    try {
      started = this.shell.execute(command);
    } catch {
      // Deleted or ended between the reservation and now.
      throw AppError.invalid('The terminal has exited; create a new one', { reason: 'exited' });
    } finally {
      this.reserved = false;
    }
    this.lastCommand = command;
    this.log.command(command);
    this.touch();
    this.announce('busy');
    const { stateAfter } = options;
    const before = this.state;
    // While it runs, and if it stops part way (interrupted, failed), the shell holds some of what
    // the line does: either state may be the one, so both count. A line that ran to its end with
    // status 0 left exactly what its judgement found.
    this.state = stateAfter === null ? unfollowable(before, 'a line that could not be analysed ran') : mergeShellStates([before, stateAfter]);
    const { finished, outputSoFar } = started;
    void finished.then(({ exitCode, shellExited }) => {
      this.touch();
      if (shellExited) return;
      if (stateAfter !== null && exitCode === 0) this.state = stateAfter;
      for (const listener of this.commandEndListeners) listener(exitCode);
      this.announce(this.status);
    });
    if (!options.waitForCompletion) return { kind: 'started' };
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => {
        resolve(null);
      }, options.timeoutMs);
    });
    const outcome = await Promise.race([finished, timedOut]);
    clearTimeout(timer);
    if (outcome === null) return { kind: 'timedOut', output: outputSoFar() };
    return { kind: 'completed', output: outcome.output, exitCode: outcome.exitCode };
  }

  /**
   * Keystrokes go only to a running command's programs (CONTRACT §8): at the shell's prompt
   * there is no one to read them, and the shell itself never takes commands from the terminal.
   */
  inputTarget(): InputTarget {
    const run = this.shell.inputTarget();
    if (run === null) {
      throw AppError.invalid('No program is running in this terminal to read input; send commands with `execute`', { reason: 'no_program' });
    }
    return { run, command: this.lastCommand, program: this.shell.foregroundProgramName(), first: run !== this.lastInputRun };
  }

  /** Sends keystrokes to the command `target` named, unless it has ended meanwhile. */
  sendInput(data: string, target: InputTarget): void {
    if (!this.shell.input(data, target.run)) {
      throw AppError.invalid('The program has ended, or has more input waiting than it can take; send commands with `execute`', { reason: 'no_program' });
    }
    this.lastInputRun = target.run;
    this.touch();
  }

  /** Who reads what is typed now, from the kernel (see foreground-reader.ts). */
  foregroundReader(): ForegroundReader {
    return this.shell.foregroundReader();
  }

  /** Whether the terminal shows what is typed now; null when that cannot be read. */
  echoes(): Promise<boolean | null> {
    return this.shell.echoes();
  }

  /** The line buffer for typed input to one reader; another reader starts an empty one. */
  typedLines(owner: string, maxLength: number): TypedLines {
    if (this.typed?.owner !== owner) this.typed = { owner, lines: new TypedLines(maxLength) };
    return this.typed.lines;
  }

  /** Keeps keystrokes to another program until each line ends, for its audit entry. */
  typedRecord(run: number): TypedRecord {
    if (this.record?.run !== run) this.record = { run, lines: new TypedRecord() };
    return this.record.lines;
  }

  /**
   * The state of a nested shell, for judging the lines typed into it: at first what this
   * terminal's shell had when the nested one was first seen (exported variables and functions
   * reach it; other definitions are kept too, erring toward more).
   */
  nestedState(reader: string): ShellState {
    let state = this.nestedStates.get(reader);
    if (state === undefined) {
      state = cloneShellState(this.state);
      this.nestedStates.set(reader, state);
    }
    return state;
  }

  /**
   * After a line is sent to a nested shell: there is no marker telling when or how it ended, so
   * both what the shell had and what the line leaves count from now on.
   */
  typedLineSent(reader: string, after: ShellState | null): void {
    const before = this.nestedState(reader);
    this.nestedStates.set(reader, after === null ? unfollowable(before, 'a typed line that could not be analysed ran') : mergeShellStates([before, after]));
  }

  holdInput(commandId: string, held: HeldInput): void {
    this.heldInputs.set(commandId, held);
    // Expired holds are never taken: past this many, the oldest go (their rows expire anyway).
    for (const oldest of this.heldInputs.keys()) {
      if (this.heldInputs.size <= MAX_HELD_INPUTS) break;
      this.heldInputs.delete(oldest);
    }
  }

  /** The typed line a held command stands for, taken once (a plain command: undefined). */
  takeHeldInput(commandId: string): HeldInput | undefined {
    const held = this.heldInputs.get(commandId);
    this.heldInputs.delete(commandId);
    return held;
  }

  /** The run keystrokes would reach now, or null at the prompt. */
  currentRun(): number | null {
    return this.shell.inputTarget();
  }

  interrupt(): void {
    this.shell.interrupt();
    this.touch();
  }

  onExit(listener: (exitCode: number) => void): () => void {
    return this.shell.onExit(listener);
  }

  onOutput(listener: (raw: string) => void): () => void {
    return this.shell.onOutput(listener);
  }

  /** The last output as it came (escape sequences kept), for a viewer that connects now. */
  recentOutput(): string {
    return this.recent;
  }

  resize(cols: number, rows: number): void {
    this.shell.resize(cols, rows);
  }

  /** Told when the status changes: `busy` as a command is sent, back after it, `exited` at the end. */
  onStatus(listener: (status: TerminalStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => {
      this.statusListeners.delete(listener);
    };
  }

  private announce(status: TerminalStatus): void {
    for (const listener of this.statusListeners) listener(status);
  }

  /** Told each time a command sent through `run` finishes, with its exit code. */
  onCommandEnd(listener: (exitCode: number) => void): () => void {
    this.commandEndListeners.add(listener);
    return () => {
      this.commandEndListeners.delete(listener);
    };
  }

  kill(): void {
    this.shell.kill();
    void this.confinement?.release();
  }

  /** Resolves once what the terminal held besides its shell (cgroup, proxy) is released. */
  released(): Promise<void> {
    return this.confinement?.release() ?? Promise.resolve();
  }

  /** Ends the terminal for a reason of the service's own, saying so in its output. */
  end(reason: string): void {
    this.endReason ??= reason;
    this.shell.notice(`terminal ended by the service: ${endNotices[reason] ?? reason}`);
    this.kill();
  }

  private touch(): void {
    this.lastActivity = new Date();
  }
}
