import { execFileSync } from 'node:child_process';
import { chmodSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { removeRuntimeFolder, runtimeFolder } from '../sandbox/runtime-folder.js';

// Where a terminal's bash reads its commands from: a named pipe that only the service writes.
// The terminal (the PTY) is then only ever read by programs, so keystrokes sent to a program,
// even ones it leaves unread or that arrive just after it ended, can never become a command that
// skipped the risk analysis, the confirmation and the audit log.
//
// Nobody else can write to the pipe: once the service holds it open its mode is read-only, and
// under bubblewrap the shell opens it through a read-only bind mount, so a command can neither
// reopen it for writing (through /proc/self/fd/N, say) nor change its mode back. The shell's
// PROMPT_COMMAND checks before each line that this pipe is still its input (marker-stream.ts).
// The pipe's folder lies in the service's private runtime root (runtime-folder.ts), which no
// workspace may be, hold or lie in: a terminal that had it as a workspace could write commands
// into another terminal's shell.

export interface CommandLaunch {
  /** Programs that prepare the process and exec the next one (a cgroup join, rlimits). */
  prefix: readonly string[];
  /** bubblewrap's arguments up to and including `--`; null when unsandboxed (SANDBOX=none). */
  sandbox: readonly string[] | null;
  /** POSIX shell run inside the sandbox before the shell starts (the proxy's bridge), or ''. */
  setup: string;
  /** The shell and its arguments. */
  shell: readonly string[];
}

/** Where the pipe's folder appears inside the sandbox. */
const SANDBOX_FOLDER = '/run/assistant-shell';

export class CommandPipe {
  private readonly directory: string;
  private readonly path: string;
  private readonly writer: Socket;
  /** The pipe's identity, to recognise it as a process's standard input. */
  private readonly identity: { dev: number; ino: number };
  /** The pipe's path as the shell sees it (it goes into the shell's settings unquoted). */
  readonly shellPath: string;

  constructor(sandboxed: boolean) {
    this.directory = runtimeFolder('shell');
    this.path = join(this.directory, 'commands');
    this.shellPath = sandboxed ? `${SANDBOX_FOLDER}/commands` : this.path;
    try {
      if (!/^[\w./-]+$/.test(this.shellPath)) throw new Error(`the runtime folder's path is not a plain path: ${this.path}`);
      execFileSync('mkfifo', ['-m', '600', this.path], { stdio: 'ignore' });
      // Read-write, so opening never waits for bash and the pipe never reports a closed reader
      // (the shell's end is told by the PTY instead).
      const fd = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK);
      chmodSync(this.path, 0o400);
      const { dev, ino } = fstatSync(fd);
      this.identity = { dev, ino };
      this.writer = new Socket({ fd, readable: false, writable: true });
    } catch (error) {
      this.removeName();
      throw error;
    }
    this.writer.on('error', () => {
      // Only when the service itself closes it; the shell is gone by then.
    });
  }

  /**
   * The whole command line of a launch: the prefix, then bubblewrap with the pipe's folder bound
   * read-only, then a POSIX shell that runs the setup and execs the shell with its standard
   * input redirected to the pipe (so no command ever comes from the terminal).
   */
  wrap(launch: CommandLaunch): { file: string; args: string[] } {
    const inner = ['/bin/sh', '-c', `${launch.setup}exec "$@" <"$0"`, this.shellPath, ...launch.shell];
    const sandbox = launch.sandbox === null ? [] : ['bwrap', ...launch.sandbox.slice(0, -1), '--ro-bind', this.directory, SANDBOX_FOLDER, '--'];
    const [file = '/bin/sh', ...args] = [...launch.prefix, ...sandbox, ...inner];
    return { file, args };
  }

  write(text: string): void {
    this.writer.write(text);
  }

  /**
   * Whether process `pid` still reads this pipe as its standard input: false when it reads
   * something else, null when that cannot be seen (the process is gone, or /proc refuses).
   */
  isInputOf(pid: number): boolean | null {
    try {
      const { dev, ino } = statSync(`/proc/${pid}/fd/0`);
      return dev === this.identity.dev && ino === this.identity.ino;
    } catch {
      return null;
    }
  }

  close(): void {
    this.removeName();
    this.writer.destroy();
  }

  private removeName(): void {
    removeRuntimeFolder(this.directory);
  }
}
