import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { RiskVerdict } from '../security/risk-analysis.js';
import type { TerminalSession } from '../terminals/terminal-session.js';
import { workspaceRoots } from './workspace-roots.js';

export interface Assessment {
  verdict: RiskVerdict;
  /** The shell's directory the verdict was made for; null when it could not be read. */
  workingDirectory: string | null;
}

/**
 * Risk analysis of a command in the terminal's present state (its real cwd, today's workspaces);
 * `directory` judges it as run from another folder (a confirmation, which runs where it was held).
 */
export async function assessCommand(store: Store, config: Config, terminal: TerminalSession, command: string, directory?: string): Promise<Assessment> {
  // The analyser (and its parser) load with the first command, not with the service.
  const [{ analyzeCommand }, roots] = await Promise.all([import('../security/risk-analysis.js'), workspaceRoots(store, config)]);
  const workingDirectory = directory ?? terminal.currentDirectory();
  const verdict = analyzeCommand(command, {
    cwd: workingDirectory,
    home: terminal.home,
    workspaceRoots: roots,
    restrictToWorkspaces: config.WORKSPACE_RESTRICTION_ENABLED,
  });
  return { verdict, workingDirectory };
}
