import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { AppError } from '../errors/app-error.js';

/** Ctrl-C to the caller's terminal: the foreground job gets SIGINT. */
export async function interruptTerminal(deps: CommandDeps, actor: Actor, terminalId: string): Promise<void> {
  const terminal = deps.terminals.require(actor.user.id, terminalId);
  if (terminal.status === 'exited') throw AppError.invalid('The terminal has exited', { reason: 'exited' });
  terminal.interrupt();
  await recordAudit(deps.store, {
    type: 'terminal',
    userId: actor.user.id,
    ip: actor.ip,
    details: { action: 'interrupted', terminalId: terminal.id },
  });
}
