import type { TerminalSession, TerminalStatus } from './terminal-session.js';

export interface TerminalView {
  terminalId: string;
  status: TerminalStatus;
  workingDirectory: string;
  lastExitCode: number | null;
  createdAt: string;
  lastActivity: string;
  /** Why the service ended it (`reason: "workspace_removed"`, `"process_limit"`), once it did. */
  details?: { reason: string };
}

/** A terminal as the API shows it; `workingDirectory` is where the shell is now, when known. */
export function toTerminalView(session: TerminalSession): TerminalView {
  return {
    terminalId: session.id,
    status: session.status,
    workingDirectory: session.workingDirectory(),
    lastExitCode: session.lastExitCode,
    createdAt: session.createdAt.toISOString(),
    lastActivity: session.lastActivity.toISOString(),
    ...(session.endReason === null ? {} : { details: { reason: session.endReason } }),
  };
}
