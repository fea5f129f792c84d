import { execFileSync } from 'node:child_process';
import { constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Where a terminal's bash reads its commands from: a named pipe that only the service writes.
// The terminal (the PTY) is then only ever read by programs, so keystrokes sent to a program,
// even ones it leaves unread or that arrive just after it ended, can never become a command that
// skipped the risk analysis, the confirmation and the audit log. The pipe lives in a private
// directory outside the sandbox's view only until bash has opened it; then its name is removed.

export interface CommandLaunch {
  file: string;
  args: string[];
}

export class CommandPipe {
  private readonly directory: string;
  private readonly path: string;
  private readonly writer: Socket;

  constructor() {
    this.directory = mkdtempSync(join(tmpdir(), 'assistant-shell-'));
    this.path = join(this.directory, 'commands');
    try {
      execFileSync('mkfifo', ['-m', '600', this.path], { stdio: 'ignore' });
      // Read-write, so opening never waits for bash and the pipe never reports a closed reader
      // (the shell's end is told by the PTY instead).
      const fd = openSync(this.path, constants.O_RDWR | constants.O_NONBLOCK);
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
   * The shell's launch with its standard input redirected to the pipe by a POSIX shell that
   * then execs it, before any sandbox is entered (the sandbox cannot see the pipe's directory).
   */
  wrap(launch: CommandLaunch): CommandLaunch {
    return { file: '/bin/sh', args: ['-c', 'exec "$@" <"$0"', this.path, launch.file, ...launch.args] };
  }

  write(text: string): void {
    this.writer.write(text);
  }

  /** Once bash holds the pipe open, its name is no longer needed by anyone. */
  removeName(): void {
    rmSync(this.directory, { recursive: true, force: true });
  }

  close(): void {
    this.removeName();
    this.writer.destroy();
  }
}

