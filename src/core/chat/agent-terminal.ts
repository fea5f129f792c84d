import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { createTerminal } from '../terminals/create-terminal.js';
import type { TerminalSession } from '../terminals/terminal-session.js';

/**
 * The terminal the model's run_command uses: one per user, made on first use in the active
 * workspace and kept, like any terminal of the user (listed, counted against the cap, deletable).
 * A held command names it, so a confirmation runs it where the model asked.
 */
export async function agentTerminalFor(deps: CommandDeps, actor: Actor, workspacePath: string): Promise<TerminalSession> {
  const existing = deps.terminals.agentTerminal(actor.user.id);
  if (existing) return existing;
  const created = await createTerminal(deps, actor, { workingDirectory: workspacePath });
  deps.terminals.rememberAgentTerminal(created);
  return created;
}
