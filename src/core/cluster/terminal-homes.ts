import type { TerminalSession } from '../terminals/terminal-session.js';
import type { ClusterDirectory } from './cluster-directory.js';

/** A terminal's claim outlives a crash of its instance by at most this long. */
const CLAIM_TTL_MS = 15 * 60 * 1000;
const RENEW_EVERY_MS = 5 * 60 * 1000;

/**
 * Keeps Redis told which terminals live here, so a request for one that reaches another
 * instance is carried here (CONTRACT §9b). Claims are renewed while the terminal lives and
 * whenever Redis comes back, so a claim lost to an outage returns, and one left by a crash expires.
 */
export function publishTerminalHomes(directory: ClusterDirectory, terminals: () => readonly TerminalSession[]) {
  const renew = () => {
    for (const terminal of terminals()) void directory.claim('terminal', terminal.id, CLAIM_TTL_MS);
  };
  const timer = setInterval(renew, RENEW_EVERY_MS);
  timer.unref();
  directory.onReconnect(renew);
  return {
    added: (terminal: TerminalSession) => void directory.claim('terminal', terminal.id, CLAIM_TTL_MS),
    removed: (terminal: TerminalSession) => void directory.release('terminal', terminal.id),
    stop: () => {
      clearInterval(timer);
    },
  };
}
