import type { RawData, WebSocket } from 'ws';
import type { User } from '../core/auth/permissions.js';
import { AppError } from '../core/errors/app-error.js';
import { newId } from '../core/ids.js';
import type { TerminalSession } from '../core/terminals/terminal-session.js';
import { createContextInner, type AppDeps, type Context } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createCallerFactory } from '../procedures/trpc.js';
import { appRouter } from '../routers/app-router.js';
import { maxBufferedBytes } from './socket-frames.js';
import { TokenExpiry } from './token-expiry.js';

const createCaller = createCallerFactory(appRouter);

/** Frames received but not yet handled, past which more are refused (each may be 64 KB of input). */
const MAX_WAITING_FRAMES = 256;

type TerminalFrame =
  | { type: 'output'; data: string }
  | { type: 'status'; status: string }
  | { type: 'confirmation_required'; commandId: string; command: string; risk: string; reasons: string[] }
  | { type: 'exit'; exitCode: number }
  | { type: 'error'; code: string; message: string };

/**
 * The terminal a socket may be opened on, checked as its REST paths are (rate group, token,
 * guard, feature flag, owner) by calling its `get` procedure with the upgrade's context.
 */
export async function terminalForSocket(deps: AppDeps, ctx: Context, terminalId: string): Promise<TerminalSession> {
  await createCaller(ctx).terminals.get({ terminalId });
  const session = deps.terminals.find(terminalId);
  // The check above was carried to the instance that holds the terminal; its live I/O is not
  // (yet): a socket must reach that instance, as a load balancer with sticky sessions does.
  if (!session) {
    throw new AppError('SERVICE_UNAVAILABLE', "This terminal lives on another instance; open its socket through that instance's address", {
      details: { reason: 'terminal_elsewhere' },
    });
  }
  return session;
}

/**
 * `/api/terminals/:terminalId/ws` (CONTRACT §8): live terminal I/O for one of several viewers.
 * On connect the recent raw output and the status are sent. `execute` goes through the same
 * command pipeline as REST (analysis, hold, audit, sandbox): `status: busy`, the output, `exit`
 * with that command's code, `status: running`; a held command is `confirmation_required`.
 * `input` goes to the running command's programs, and at the prompt is refused with an `error`
 * frame (reason `no_program`); it is not counted in the terminal's rate group, as it comes a
 * frame a keystroke. `resize` sets the PTY's size; `auth` renews the token,
 * without which the socket closes with 4401 when it expires.
 */
export class TerminalChannel {
  private readonly unsubscribe: (() => void)[] = [];
  private readonly token: TokenExpiry;
  private frames = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly terminal: TerminalSession,
    private readonly session: { user: User; ip: string },
    private readonly deps: AppDeps,
  ) {
    this.token = new TokenExpiry(socket, session.user);
    const recent = terminal.recentOutput();
    if (recent !== '') this.send({ type: 'output', data: recent });
    this.send({ type: 'status', status: terminal.status });
    this.unsubscribe.push(
      terminal.onOutput((data) => {
        this.send({ type: 'output', data });
      }),
      terminal.onCommandEnd((exitCode) => {
        this.send({ type: 'exit', exitCode });
      }),
      terminal.onStatus((status) => {
        this.send({ type: 'status', status });
      }),
    );
    // One frame at a time, in order: keystrokes must reach the program as they were typed, even
    // when the first of them waits for its audit entry.
    socket.on('message', (raw, isBinary) => {
      // A client that sends faster than its frames are handled is told so, rather than queued without bound.
      if (this.waiting >= MAX_WAITING_FRAMES) {
        this.send({ type: 'error', code: 'INVALID_REQUEST', message: 'Too many frames waiting; frame dropped' });
        return;
      }
      this.waiting += 1;
      this.frames = this.frames.then(async () => {
        await this.onFrame(raw, isBinary);
        this.waiting -= 1;
      });
    });
    socket.on('close', () => {
      for (const stop of this.unsubscribe) stop();
    });
  }

  private send(frame: TerminalFrame): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    const text = JSON.stringify(frame);
    // A viewer that does not keep up is let go before 1 MB waits for it (CONTRACT §8).
    if (this.socket.bufferedAmount + Buffer.byteLength(text) > maxBufferedBytes) {
      this.socket.close(1013, 'Reader too slow');
      return;
    }
    this.socket.send(text);
  }

  private async onFrame(raw: RawData, isBinary: boolean): Promise<void> {
    try {
      const frame = parseTerminalFrame(raw, isBinary);
      switch (frame.type) {
        case 'execute':
          await this.execute(frame.command);
          break;
        case 'input': {
          const { held } = await this.caller().terminals.input({ terminalId: this.terminal.id, data: frame.data });
          // A typed line held for confirmation is announced as a held execute is (CONTRACT §11).
          for (const line of held) this.send({ type: 'confirmation_required', ...line });
          break;
        }
        case 'resize':
          this.terminal.resize(frame.cols, frame.rows);
          break;
        case 'auth':
          await this.token.renew(this.deps.auth, frame.token, this.session.ip);
          break;
      }
    } catch (error) {
      const { code, message } = appErrorFrom(error).toEnvelope().error;
      this.send({ type: 'error', code, message });
    }
  }

  /** The procedures, called as the socket's current (renewed) token. */
  private caller() {
    const user = this.token.current;
    return createCaller(createContextInner(this.deps, { requestId: newId(), ip: this.session.ip, identify: () => Promise.resolve(user) }));
  }

  private async execute(command: string): Promise<void> {
    const reply = await this.caller().terminals.execute({ terminalId: this.terminal.id, command, waitForCompletion: false });
    if (reply.status === 'pending_confirmation' && reply.commandId) {
      this.send({ type: 'confirmation_required', commandId: reply.commandId, command, risk: reply.risk ?? 'high', reasons: reply.reasons ?? [] });
    }
  }
}

type ClientTerminalFrame =
  | { type: 'execute'; command: string }
  | { type: 'input'; data: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'auth'; token: string };

function parseTerminalFrame(raw: RawData, isBinary: boolean): ClientTerminalFrame {
  if (isBinary) throw AppError.invalid('Frames are JSON text');
  let frame: unknown;
  try {
    frame = JSON.parse(Buffer.isBuffer(raw) ? raw.toString('utf8') : Buffer.concat(raw as Buffer[]).toString('utf8'));
  } catch {
    throw AppError.invalid('A frame must be JSON');
  }
  const { type, command, data, cols, rows, token } = (typeof frame === 'object' && frame !== null ? frame : {}) as Record<string, unknown>;
  if (type === 'auth' && typeof token === 'string') return { type, token };
  if (type === 'execute' && typeof command === 'string' && command.trim() !== '') return { type, command };
  if (type === 'input' && typeof data === 'string' && data.length <= 64 * 1024) return { type, data };
  const size = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 1000;
  if (type === 'resize' && size(cols) && size(rows)) return { type, cols: cols as number, rows: rows as number };
  throw AppError.invalid('Expected {type:"execute", command}, {type:"input", data}, {type:"resize", cols, rows} (1–1000) or {type:"auth", token}');
}
