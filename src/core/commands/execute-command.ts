import { recordAudit } from '../audit/record-audit.js';
import { AppError } from '../errors/app-error.js';
import type { CommandVerdict } from '../metrics/service-metrics.js';
import type { RiskVerdict } from '../security/risk-analysis.js';
import { riskLevels, riskOrder, type RiskLevel } from '../security/risk-levels.js';
import type { RunResult, TerminalSession } from '../terminals/terminal-session.js';
import { assessCommand } from './assess-command.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from './command-deps.js';
import { redactCommand } from './command-redaction.js';
import { holdCommand } from './hold-command.js';

// The command pipeline (CONTRACT §4): risk analysis → refuse (critical) or hold (high, when
// confirmation is required) → audit → run in the terminal's sandboxed shell. REST execute and
// confirm, the terminal WebSocket and the chat engine's run_command all come through here.

export type ExecuteOutcome =
  | (RunResult & { risk: RiskVerdict })
  | { kind: 'held'; commandId: string; risk: RiskVerdict; expiresAt: Date };

export interface ExecuteOptions {
  waitForCompletion: boolean;
  /**
   * Set when a held command is being confirmed: it runs instead of being held again, in the
   * folder it was judged in, and only if judging it again finds it no worse than when held.
   */
  confirmation?: { commandId: string; issuedBy: string; workingDirectory: string; heldRisk: string };
  /**
   * The chat answer a run_command belongs to: once it is aborted the command is not sent (an
   * interrupt cannot stop a command the shell has not received yet).
   */
  signal?: AbortSignal;
  /** The model's tool call that asked for it: named in the held command's push, so a page can show that call as waiting. */
  toolCallId?: string;
}

function worseThanHeld(now: RiskLevel, held: RiskLevel | undefined): AppError {
  return new AppError('SECURITY_VIOLATION', `Command refused: judged again it is ${now}, worse than the ${held ?? 'unknown'} risk that was confirmed`, {
    details: { risk: now, heldRisk: held ?? null, reason: 'risk_changed' },
  });
}

function notRunAfterAbort(): AppError {
  return new AppError('INVALID_REQUEST', 'The command was not run: the answer that asked for it was aborted', { details: { reason: 'aborted' } });
}

export async function executeCommand(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  command: string,
  options: ExecuteOptions,
): Promise<ExecuteOutcome> {
  // Bounded analysis (CONTRACT §11): a line past the limit is not judged at all.
  const limit = deps.config.MAX_COMMAND_LENGTH;
  if (command.length > limit) {
    throw AppError.invalid(`The command is longer than MAX_COMMAND_LENGTH (${limit} characters)`, { reason: 'too_long', maxLength: limit });
  }
  terminal.reserve();
  return runReserved(deps, actor, terminal, command, options);
}

/** The pipeline on a terminal the caller has already reserved; the reservation always ends here. */
export async function runReserved(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  command: string,
  options: ExecuteOptions,
): Promise<ExecuteOutcome> {
  let sent = false;
  try {
    const confirmation = options.confirmation;
    const heldIn = confirmation?.workingDirectory === '' ? undefined : confirmation?.workingDirectory;
    const { verdict, workingDirectory, stateAfter } = await assessCommand(deps, terminal, command, heldIn);
    // Every verdict but a hold is audited here, so this is also where it is counted.
    const audit = (action: CommandVerdict, extra: Record<string, unknown> = {}) => {
      deps.metrics?.commandDecided(verdict.level, action);
      return recordAudit(deps.store, {
        type: 'command',
        userId: actor.user.id,
        ip: actor.ip,
        risk: verdict.level,
        details: {
          action,
          terminalId: terminal.id,
          command: redactCommand(command),
          workingDirectory,
          reasons: verdict.reasons,
          ...(confirmation ? { commandId: confirmation.commandId, issuedBy: confirmation.issuedBy } : {}),
          ...extra,
        },
      });
    };
    if (verdict.level === 'critical') {
      await audit('refused');
      throw new AppError('SECURITY_VIOLATION', `Command refused: ${verdict.reasons.join('; ')}`, {
        details: { risk: verdict.level, reasons: verdict.reasons },
      });
    }
    // CONTRACT §11: what a person confirmed is what runs. Judged again now, a command that has
    // become worse (a workspace removed, the shell's state changed) is refused, not run.
    const held = riskLevels.find((level) => level === confirmation?.heldRisk);
    if (confirmation && (held === undefined || riskOrder(verdict.level, held) > 0)) {
      await audit('refused', { reason: 'judged worse than when it was held' });
      throw worseThanHeld(verdict.level, held);
    }
    const stopIfAborted = async () => {
      if (!options.signal?.aborted) return;
      await audit('aborted');
      throw notRunAfterAbort();
    };
    await stopIfAborted();
    if (verdict.level === 'high' && deps.config.COMMAND_CONFIRMATION_REQUIRED && !options.confirmation) {
      const pending = await holdCommand(deps, actor, terminal, command, verdict, workingDirectory);
      deps.events?.publish(actor.user.id, {
        kind: 'pending_command',
        commandId: pending.id,
        terminalId: terminal.id,
        command: redactCommand(command),
        risk: verdict.level,
        reasons: verdict.reasons,
        ...(options.toolCallId === undefined ? {} : { toolCallId: options.toolCallId }),
      });
      return { kind: 'held', commandId: pending.id, risk: verdict, expiresAt: pending.expiresAt };
    }
    // Written before the command starts: a command that crashes the service is still on record.
    await audit('executed', { waitForCompletion: options.waitForCompletion });
    // Checked again with nothing awaited between here and the send: an abort during the audit
    // write is not lost. The entry above then has an `aborted` one after it.
    await stopIfAborted();
    // The shell may have moved since the hold: it goes back to the held folder first, and the
    // kernel's word on where it is decides whether the command is sent.
    if (heldIn !== undefined && !(await terminal.moveTo(heldIn))) {
      await audit('refused', { reason: 'the terminal could not return to the folder it was judged in' });
      throw new AppError('SECURITY_VIOLATION', `Command refused: the terminal could not return to ${heldIn}, where it was judged`, {
        details: { reason: 'working_directory' },
      });
    }
    sent = true;
    const result = await terminal.run(command, {
      timeoutMs: deps.config.COMMAND_TIMEOUT_MS,
      waitForCompletion: options.waitForCompletion,
      stateAfter,
    });
    return { ...result, risk: verdict };
  } finally {
    if (!sent) terminal.release();
  }
}
