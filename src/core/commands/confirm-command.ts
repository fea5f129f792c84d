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
import type { CommandDecision } from './command-decisions.js';
import type { TerminalSession } from '../terminals/terminal-session.js';

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

  // A paused agent may be waiting on this command (CONTRACT §12): every decision reaches it.
  const tell = (decision: CommandDecision) => deps.decisions?.settle(row.id, decision);
  if (!input.confirmed) {
    deps.terminals.find(row.terminalId)?.takeHeldInput(row.id);
    await decide('rejected');
    tell({ kind: 'rejected' });
    await audit('rejected');
    return { executed: false };
  }
  const terminal = deps.terminals.find(row.terminalId);
  if (!terminal || terminal.status === 'exited') {
    await decide('dropped');
    const gone = AppError.invalid('The terminal of this command has gone; the command was dropped', { reason: 'terminal_gone' });
    tell({ kind: 'failed', code: gone.code, message: gone.message });
    await audit('dropped', { reason: 'terminal gone' });
    throw gone;
  }
  // A holder, not a `let`: the callback sets it, which control-flow narrowing cannot see.
  const progress = { decided: false };
  const decideOnce = async (status: string) => {
    await decide(status);
    progress.decided = true;
  };
  try {
    const outcome = await runConfirmed(deps, actor, terminal, row, decideOnce, audit);
    tell({ kind: 'executed', outcome });
    return { executed: true, outcome };
  } catch (error) {
    // Once decided the command cannot be confirmed again: the agent learns why it did not run.
    // Undecided (the terminal busy), it stays pending and the agent goes on waiting.
    if (progress.decided) {
      const failure = error instanceof AppError ? error : new AppError('INTERNAL_ERROR', 'The command could not be run');
      tell({ kind: 'failed', code: failure.code, message: failure.message });
    }
    throw error;
  }
}

/** Runs a confirmed command: a typed line where it was typed, else through the pipeline in the held folder. */
async function runConfirmed(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  row: { id: string; userId: string; command: string; risk: string; workingDirectory: string },
  decide: (status: string) => Promise<void>,
  audit: (action: CommandVerdict, extra?: Record<string, unknown>) => Promise<void>,
): Promise<ExecuteOutcome> {
  const typed = terminal.takeHeldInput(row.id);
  if (typed !== undefined) return confirmTypedLine(deps, terminal, typed, { heldRisk: row.risk, decide, audit });
  // A busy terminal answers 400 busy and the command stays pending for a later confirmation.
  terminal.reserve();
  try {
    await decide('executed');
    await audit('confirmed');
    return await runReserved(deps, actor, terminal, row.command, {
      waitForCompletion: true,
      confirmation: { commandId: row.id, issuedBy: row.userId, workingDirectory: row.workingDirectory, heldRisk: row.risk },
    });
  } catch (error) {
    // Whatever stopped it before the command was sent, the terminal is free again.
    terminal.release();
    // Analysed again in the shell's present state, it may now be critical (the shell moved since).
    if (error instanceof AppError && error.code === 'SECURITY_VIOLATION') {
      await deps.store.db.pendingCommand.update({ where: { id: row.id }, data: { status: 'refused' } });
    }
    throw error;
  }
}
