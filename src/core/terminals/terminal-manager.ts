import { AppError } from '../errors/app-error.js';
import { isPathInside } from '../paths/path-inside.js';
import type { TerminalSession } from './terminal-session.js';

export interface TerminalManagerOptions {
  /** TERMINAL_IDLE_TIMEOUT_MS: an idle shell (no command, no output) is ended after it. */
  idleTimeoutMs: number;
  /** Told when the idle timeout ends a terminal, for the audit log. */
  onIdleEnd?: (terminal: TerminalSession) => void;
}

/** The live terminal sessions of this instance (shells live where they were started). */
export class TerminalManager {
  private readonly sessions = new Map<string, TerminalSession>();
  /** Creations under way per user: they count against the cap before their shell exists. */
  private readonly starting = new Map<string, number>();
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly options: TerminalManagerOptions) {}

  /**
   * Reserves one of the user's MAX_TERMINALS_PER_USER places for a terminal being created;
   * exited terminals (kept until DELETE) hold no shell and do not count.
   */
  claimSlot(userId: string, cap: number): () => void {
    const live = [...this.sessions.values()].filter((s) => s.ownerId === userId && s.status !== 'exited').length;
    const starting = this.starting.get(userId) ?? 0;
    if (live + starting >= cap) {
      throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${cap} terminals per user; delete one first`, { details: { cap } });
    }
    this.starting.set(userId, starting + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.starting.get(userId) ?? 1) - 1;
      if (left > 0) this.starting.set(userId, left);
      else this.starting.delete(userId);
    };
  }

  add(session: TerminalSession): void {
    this.sessions.set(session.id, session);
    this.armIdleTimer(session);
    session.onExit(() => {
      this.clearIdleTimer(session.id);
    });
  }

  /** The user's terminal; another user's, an unknown or a malformed id are all 404 (CONTRACT §0). */
  require(userId: string, id: string): TerminalSession {
    const session = this.sessions.get(id);
    if (session?.ownerId !== userId) throw AppError.notFound('Terminal');
    return session;
  }

  /** Any user's terminal, for confirmations by Lead and TheDude. */
  find(id: string): TerminalSession | undefined {
    return this.sessions.get(id);
  }

  listFor(userId: string): TerminalSession[] {
    return [...this.sessions.values()]
      .filter((session) => session.ownerId === userId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  /** Kills the shell and everything it started, and forgets the terminal. */
  remove(session: TerminalSession): void {
    this.clearIdleTimer(session.id);
    session.kill();
    this.sessions.delete(session.id);
  }

  /** Whether a live terminal started in, or is now in, `directory` or below it. */
  hasLiveTerminalUnder(directory: string): boolean {
    for (const session of this.sessions.values()) {
      if (session.status === 'exited') continue;
      if (session.directories().some((path) => isPathInside(path, directory))) return true;
    }
    return false;
  }

  /** Ends every shell: the service is stopping and must leave no process behind. */
  stopAll(): void {
    for (const session of this.sessions.values()) this.remove(session);
  }

  private armIdleTimer(session: TerminalSession, delay = this.options.idleTimeoutMs): void {
    this.clearIdleTimer(session.id);
    const timeout = this.options.idleTimeoutMs;
    const timer = setTimeout(() => {
      this.idleTimers.delete(session.id);
      if (session.status === 'exited') return;
      // A command still running is not idleness; recent output or input moves the deadline.
      if (session.status === 'busy') {
        this.armIdleTimer(session);
        return;
      }
      const idleFor = Date.now() - session.lastActivity.getTime();
      if (idleFor < timeout) {
        this.armIdleTimer(session, timeout - idleFor);
        return;
      }
      session.kill();
      this.options.onIdleEnd?.(session);
    }, delay);
    timer.unref();
    this.idleTimers.set(session.id, timer);
  }

  private clearIdleTimer(id: string): void {
    const timer = this.idleTimers.get(id);
    if (timer) clearTimeout(timer);
    this.idleTimers.delete(id);
  }
}
