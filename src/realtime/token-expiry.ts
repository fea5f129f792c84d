import type { WebSocket } from 'ws';
import type { Authenticator } from '../core/auth/authenticator.js';
import type { User } from '../core/auth/permissions.js';
import { AppError } from '../core/errors/app-error.js';
import { closeCodes } from './socket-frames.js';

/** The longest a timer may be set for in Node (about 24.8 days). */
const maxTimerMs = 2 ** 31 - 1;

/**
 * CONTRACT §5: an open socket closes with 4401 when its token expires, unless the client sent a
 * fresh token of the same user first. Shared by every channel.
 */
export class TokenExpiry {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    private user: User,
  ) {
    this.arm();
    socket.on('close', () => {
      clearTimeout(this.timer);
    });
  }

  get current(): User {
    return this.user;
  }

  /** Checks `token` as any request's and, when it is the same user's, carries on with it. */
  async renew(auth: Authenticator, token: unknown, ip: string): Promise<void> {
    if (typeof token !== 'string' || token === '') throw AppError.invalid('`token` is required to renew');
    const user = await auth.identify(token, ip);
    if (user.id !== this.user.id) throw new AppError('UNAUTHORIZED', 'The token belongs to another user');
    this.user = user;
    this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    const expiresAt = this.user.tokenExpiresAt;
    if (expiresAt === undefined) return;
    this.timer = setTimeout(
      () => {
        this.socket.close(closeCodes.tokenExpired, 'Token expired');
      },
      Math.min(Math.max(0, expiresAt - Date.now()), maxTimerMs),
    );
  }
}
