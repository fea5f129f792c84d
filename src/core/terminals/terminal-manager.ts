import { AppError } from '../errors/app-error.js';
import { isPathInside } from '../paths/path-inside.js';
import { pidNamespaceOf, readProcessStat, socketHeldBy, tcpSocketInode } from './process-tree.js';
import type { TerminalSession } from './terminal-session.js';

export interface TerminalManagerOptions {
  /** TERMINAL_IDLE_TIMEOUT_MS: an idle shell (no command, no output) is ended after it. */
  idleTimeoutMs: number;
  /** MAX_TERMINALS_PER_USER: live terminals per user; as many exited ones are kept besides. */
  maxPerUser: number;
  /** Told when the idle timeout ends a terminal, for the audit log. */
  onIdleEnd?: (terminal: TerminalSession) => void;
  /** Told when a command finishes in any terminal, for live pushes. */
  onCommandEnd?: (terminal: TerminalSession, exitCode: number) => void;
  /** Told when a terminal is added and when it is forgotten (other instances learn where it lives). */
  onAdded?: (terminal: TerminalSession) => void;
  onRemoved?: (terminal: TerminalSession) => void;
}

/** The live terminal sessions of this instance (shells live where they were started). */
export class TerminalManager {
  private readonly sessions = new Map<string, TerminalSession>();
  /** Creations under way per user: they count against the cap before their shell exists. */
  private readonly starting = new Map<string, number>();
  private readonly idleTimers = new Map<string, NodeJS.Timeout>();
  /** The terminal each user's chat agent runs its commands in (see core/chat/agent-terminal.ts). */
  private readonly agentTerminalIds = new Map<string, string>();
  private stopped = false;

  constructor(private readonly options: TerminalManagerOptions) {}

  /**
   * Reserves one of the user's MAX_TERMINALS_PER_USER places for a terminal being created;
   * exited terminals (kept until DELETE) hold no shell and do not count.
   */
  claimSlot(userId: string): () => void {
    const cap = this.options.maxPerUser;
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
    // Created while the service stops: it must not outlive stopAll().
    if (this.stopped) {
      session.kill();
      throw new AppError('SERVICE_UNAVAILABLE', 'The service is stopping');
    }
    this.sessions.set(session.id, session);
    this.options.onAdded?.(session);
    this.forgetOldExited(session.ownerId);
    this.armIdleTimer(session);
    const { onCommandEnd } = this.options;
    if (onCommandEnd) {
      session.onCommandEnd((exitCode) => {
        onCommandEnd(session, exitCode);
      });
    }
    session.onExit(() => {
      this.clearIdleTimer(session.id);
      this.forgetOldExited(session.ownerId);
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

  /** The user's agent terminal while it is live. */
  agentTerminal(userId: string): TerminalSession | undefined {
    const id = this.agentTerminalIds.get(userId);
    const session = id === undefined ? undefined : this.sessions.get(id);
    return session && session.status !== 'exited' && session.ownerId === userId ? session : undefined;
  }

  rememberAgentTerminal(session: TerminalSession): void {
    this.agentTerminalIds.set(session.ownerId, session.id);
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
    if (this.sessions.delete(session.id)) this.options.onRemoved?.(session);
  }

  /** Every terminal of this instance, live or exited. */
  all(): TerminalSession[] {
    return [...this.sessions.values()];
  }

  /** Whether a live terminal started in, or is now in, `directory` or below it. */
  hasLiveTerminalUnder(directory: string): boolean {
    for (const session of this.sessions.values()) {
      if (session.status === 'exited') continue;
      if (session.directories().some((path) => isPathInside(path, directory))) return true;
    }
    return false;
  }

  /**
   * Whether the TCP connection from `clientPort` to our `serverPort` was opened by a process
   * inside one of the live terminals. Shells share the host's network with SANDBOX_NETWORK=host
   * or SANDBOX=none, so without this a command could call the service as its user (with
   * authentication off, as everyone) and, say, confirm its own held commands. It matches
   * sockets by port, which is a best effort; the network namespace of the default is the rule.
   */
  isTerminalConnection(clientPort: number, serverPort: number): boolean {
    const namespaces = new Set<string>();
    const sessions = new Set<number>();
    for (const session of this.sessions.values()) {
      const membership = session.membership();
      if (membership === null) continue;
      if ('namespace' in membership) namespaces.add(membership.namespace);
      else sessions.add(membership.session);
    }
    if (namespaces.size === 0 && sessions.size === 0) return false;
    const inode = tcpSocketInode(clientPort, serverPort);
    const member = (pid: number) => {
      const namespace = namespaces.size > 0 ? pidNamespaceOf(pid) : null;
      if (namespace !== null && namespaces.has(namespace)) return true;
      return sessions.size > 0 && sessions.has(readProcessStat(pid)?.session ?? -1);
    };
    return inode !== null && socketHeldBy(inode, member);
  }

  /**
   * Ends the live terminals whose sandbox made `path` (or a folder in it) writable, saying why;
   * they stay listed as exited. Returns the ones ended.
   */
  endWritersOf(path: string, reason: string): TerminalSession[] {
    const ended: TerminalSession[] = [];
    for (const session of this.sessions.values()) {
      if (session.status === 'exited') continue;
      if (!session.writable.some((folder) => isPathInside(folder, path) || isPathInside(path, folder))) continue;
      session.end(reason);
      ended.push(session);
    }
    return ended;
  }

  /** Ends every shell: the service is stopping and must leave no process behind. */
  stopAll(): Promise<void> {
    this.stopped = true;
    const sessions = [...this.sessions.values()];
    for (const session of sessions) this.remove(session);
    return Promise.all(sessions.map((session) => session.released())).then(() => undefined);
  }

  /**
   * Exited terminals are kept until DELETE (CONTRACT §3) so their exit code and log can be read,
   * but a user who never deletes them must not grow the service without bound: past as many as
   * the live cap, the oldest go.
   */
  private forgetOldExited(userId: string): void {
    const exited = this.listFor(userId).filter((session) => session.status === 'exited');
    for (const session of exited.slice(0, Math.max(0, exited.length - this.options.maxPerUser))) this.remove(session);
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
