import { AppError } from '../errors/app-error.js';
import type { CommandVerdict } from '../metrics/service-metrics.js';
import { riskLevels, riskOrder } from '../security/risk-levels.js';
import { judgeFor, readerKey } from '../terminals/typed-line-judgement.js';
import type { HeldInput, TerminalSession } from '../terminals/terminal-session.js';
import type { CommandDeps } from './command-deps.js';
import type { ExecuteOutcome } from './execute-command.js';

// A held line that was typed into a nested shell or an interpreter (CONTRACT §11), confirmed: it
// is typed, with its Enter, into the same reader it was judged for, judged again there first. If
// that reader no longer holds the terminal (it ended, another program took the foreground) or
// hides what is typed now, the line is dropped: typed elsewhere, it would be another command.

export interface TypedConfirmation {
  heldRisk: string;
  decide: (status: string) => Promise<void>;
  audit: (action: CommandVerdict, extra?: Record<string, unknown>) => Promise<void>;
}

export async function confirmTypedLine(
  deps: CommandDeps,
  terminal: TerminalSession,
  held: HeldInput,
  confirmation: TypedConfirmation,
): Promise<ExecuteOutcome> {
  const { decide, audit } = confirmation;
  const drop = async (reason: string, message: string) => {
    await decide('dropped');
    await audit('dropped', { reason });
    throw AppError.invalid(message, { reason: 'reader_gone' });
  };
  const reader = terminal.foregroundReader();
  if (terminal.currentRun() !== held.run || reader.kind === 'program' || readerKey(reader, held.run) !== held.reader) {
    return drop('reader gone', 'The shell or interpreter this line was typed into no longer reads the terminal; the line was dropped');
  }
  if ((await terminal.echoes()) !== true) {
    return drop('echo off', 'The reader this line was typed into now hides what is typed; the line was dropped');
  }
  const { verdict, stateAfter } = await judgeFor(deps, terminal, reader, held.line);
  const heldLevel = riskLevels.find((level) => level === confirmation.heldRisk);
  if (heldLevel === undefined || riskOrder(verdict.level, heldLevel) > 0) {
    await decide('refused');
    await audit('refused', { reason: 'judged worse than when it was held' });
    throw new AppError('SECURITY_VIOLATION', `Typed line refused: judged again it is ${verdict.level}, worse than the ${heldLevel ?? 'unknown'} risk that was confirmed`, {
      details: { risk: verdict.level, heldRisk: heldLevel ?? null, reason: 'risk_changed' },
    });
  }
  await decide('executed');
  await audit('confirmed', { typed: true });
  terminal.sendInput(`${held.line}\r`, terminal.inputTarget());
  if (reader.kind === 'shell') terminal.typedLineSent(reader.key, stateAfter);
  return { kind: 'started', risk: verdict };
}
