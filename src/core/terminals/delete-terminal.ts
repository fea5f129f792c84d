import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';

/** Ends the caller's terminal and everything its shell started (CONTRACT §4: DELETE). */
export async function deleteTerminal(deps: CommandDeps, actor: Actor, terminalId: string): Promise<void> {
  const terminal = deps.terminals.require(actor.user.id, terminalId);
  deps.terminals.remove(terminal);
  await recordAudit(deps.store, {
    type: 'terminal',
    userId: actor.user.id,
    ip: actor.ip,
    details: { action: 'killed', terminalId: terminal.id },
  });
}
