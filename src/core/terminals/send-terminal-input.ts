import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import { redactCommand } from '../commands/command-redaction.js';
import type { CommandDeps } from '../commands/command-deps.js';
import { AppError } from '../errors/app-error.js';

/**
 * Keystrokes for the program running in the caller's terminal (CONTRACT §8's `input`). They are
 * data for that program, never a command: the shell does not read the terminal (command-pipe.ts).
 * The first keystrokes each command receives are audited (which command, which program), never
 * what was typed, which may be a password.
 */
export async function sendTerminalInput(deps: CommandDeps, actor: Actor, terminalId: string, data: string): Promise<void> {
  const terminal = deps.terminals.require(actor.user.id, terminalId);
  if (terminal.status === 'exited') throw AppError.invalid('The terminal has exited', { reason: 'exited' });
  const target = terminal.inputTarget();
  if (target.first) {
    await recordAudit(deps.store, {
      type: 'terminal',
      userId: actor.user.id,
      ip: actor.ip,
      details: { action: 'input', terminalId: terminal.id, command: redactCommand(target.command), program: target.program },
    });
  }
  terminal.sendInput(data, target);
}
