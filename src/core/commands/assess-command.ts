import type { CommandDeps } from './command-deps.js';
import type { RiskVerdict } from '../security/risk-analysis.js';
import type { ShellState } from '../security/shell-state.js';
import type { TerminalSession } from '../terminals/terminal-session.js';
import { workspaceRoots } from './workspace-roots.js';

export interface Assessment {
  verdict: RiskVerdict;
  /** The shell's directory the verdict was made for; null when it could not be read. */
  workingDirectory: string | null;
  /** The terminal's shell state once the command has run; null when the line could not be judged. */
  stateAfter: ShellState | null;
}

/**
 * Risk analysis of a command in the terminal's present state (its real cwd, today's workspaces,
 * what earlier lines left in its shell),
 * on the analysis thread; `directory` judges it as run from another folder (a confirmation, which
 * runs where it was held).
 */
export async function assessCommand(
  deps: Pick<CommandDeps, 'store' | 'config' | 'judge'>,
  terminal: TerminalSession,
  command: string,
  directory?: string,
): Promise<Assessment> {
  const roots = await workspaceRoots(deps.store, deps.config);
  const workingDirectory = directory ?? terminal.currentDirectory();
  const { verdict, state } = await deps.judge.judge({
    command,
    context: {
      cwd: workingDirectory,
      home: terminal.home,
      workspaceRoots: roots,
      restrictToWorkspaces: deps.config.WORKSPACE_RESTRICTION_ENABLED,
      state: terminal.shellState(),
    },
  });
  return { verdict, workingDirectory, stateAfter: state ?? null };
}
