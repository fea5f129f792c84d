import { holdsRole } from '../auth/permissions.js';
import { recordAudit } from '../audit/record-audit.js';
import { AppError } from '../errors/app-error.js';
import { isId } from '../ids.js';
import type { CommandVerdict } from '../metrics/service-metrics.js';
import { riskLevels } from '../security/risk-levels.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from './command-deps.js';
import { redactCommand } from './command-redaction.js';
import { confirmTypedLine } from './confirm-typed-line.js';
import { runReserved, type ExecuteOutcome } from './execute-command.js';

export type ConfirmOutcome = { executed: false } | { executed: true; outcome: ExecuteOutcome };

/**
 * Runs or drops a held command (CONTRACT §4). Only a pending, unexpired command can be decided;
 * its issuer decides, and Lead and TheDude may decide anyone's. Every other case is 404, so the
 * existence of other users' commands is not revealed.
 */
export async function confirmCommand(
  deps: CommandDeps,
  actor: Actor,
  input: { commandId: string; confirmed: boolean },
): Promise<ConfirmOutcome> {
  const { store } = deps;
  const row = isId(input.commandId) ? await store.db.pendingCommand.findUnique({ where: { id: input.commandId } }) : null;
  const decidable =
    row !== null &&
    row.status === 'pending' &&
    row.expiresAt > new Date() &&
    (row.userId === actor.user.id || holdsRole(actor.user.roles, 'Lead'));
  if (!row || !decidable) throw AppError.notFound('Pending command');

  const decide = async (status: string) => {
    const { count } = await store.db.pendingCommand.updateMany({
      where: { id: row.id, status: 'pending' },
      data: { status, decidedBy: actor.user.id, decidedAt: new Date() },
    });
    // Someone else decided it a moment ago.
    if (count === 0) throw AppError.notFound('Pending command');
  };
  // The stored risk is a RiskLevel written by holdCommand; read as list-pending-commands reads it.
  const risk = riskLevels.find((level) => level === row.risk) ?? 'critical';
  const audit = (action: CommandVerdict, extra: Record<string, unknown> = {}) => {
    deps.metrics?.commandDecided(risk, action);
    return recordAudit(store, {
      type: 'command',
      userId: actor.user.id,
      ip: actor.ip,
      risk: row.risk,
      details: { action, commandId: row.id, issuedBy: row.userId, terminalId: row.terminalId, command: redactCommand(row.command), ...extra },
    });
  };

  if (!input.confirmed) {
    deps.terminals.find(row.terminalId)?.takeHeldInput(row.id);
    await decide('rejected');
    await audit('rejected');
    return { executed: false };
  }
  const terminal = deps.terminals.find(row.terminalId);
  if (!terminal || terminal.status === 'exited') {
    await decide('dropped');
    await audit('dropped', { reason: 'terminal gone' });
    throw AppError.invalid('The terminal of this command has gone; the command was dropped', { reason: 'terminal_gone' });
  }
  const typed = terminal.takeHeldInput(row.id);
  if (typed !== undefined) {
    return { executed: true, outcome: await confirmTypedLine(deps, terminal, typed, { heldRisk: row.risk, decide, audit }) };
  }
  // A busy terminal answers 400 busy and the command stays pending for a later confirmation.
  terminal.reserve();
  try {
    await decide('executed');
    await audit('confirmed');
    const outcome = await runReserved(deps, actor, terminal, row.command, {
      waitForCompletion: true,
      confirmation: { commandId: row.id, issuedBy: row.userId, workingDirectory: row.workingDirectory, heldRisk: row.risk },
    });
    return { executed: true, outcome };
  } catch (error) {
    // Whatever stopped it before the command was sent, the terminal is free again.
    terminal.release();
    // Analysed again in the shell's present state, it may now be critical (the shell moved since).
    if (error instanceof AppError && error.code === 'SECURITY_VIOLATION') {
      await store.db.pendingCommand.update({ where: { id: row.id }, data: { status: 'refused' } });
    }
    throw error;
  }
}
