import type { PendingCommand } from '../../generated/sqlite/client.js';
import { recordAudit } from '../audit/record-audit.js';
import { AppError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { RiskVerdict } from '../security/risk-analysis.js';
import type { TerminalSession } from '../terminals/terminal-session.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from './command-deps.js';
import { redactCommand } from './command-redaction.js';

/** Holds of one user run one at a time on this instance, so the cap cannot be overrun by a race. */
const holdsInFlight = new Map<string, Promise<unknown>>();

function oneAtATime<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = holdsInFlight.get(key) ?? Promise.resolve();
  const next = previous.then(task, task);
  const settled = next.catch(() => undefined);
  holdsInFlight.set(key, settled);
  void settled.then(() => {
    if (holdsInFlight.get(key) === settled) holdsInFlight.delete(key);
  });
  return next;
}

/** Stores a high-risk command for confirmation by its issuer (or a Lead), within the per-user cap. */
export function holdCommand(
  deps: CommandDeps,
  actor: Actor,
  terminal: TerminalSession,
  command: string,
  verdict: RiskVerdict,
  workingDirectory: string | null,
): Promise<PendingCommand> {
  return oneAtATime(actor.user.id, async () => {
    const now = new Date();
    const cap = deps.config.MAX_PENDING_PER_USER;
    const waiting = await deps.store.db.pendingCommand.count({
      where: { userId: actor.user.id, status: 'pending', expiresAt: { gt: now } },
    });
    if (waiting >= cap) {
      throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${cap} commands may wait for confirmation; confirm or reject some first`, {
        details: { cap },
      });
    }
    const pending = await deps.store.db.pendingCommand.create({
      data: {
        id: newId(),
        userId: actor.user.id,
        terminalId: terminal.id,
        command,
        risk: verdict.level,
        reasons: verdict.reasons,
        workingDirectory: workingDirectory ?? '',
        createdAt: now,
        // A held command that is not decided in time expires (CONTRACT §0: no stale approvals).
        expiresAt: new Date(now.getTime() + deps.config.PENDING_COMMAND_LIFETIME_MS),
      },
    });
    await recordAudit(deps.store, {
      type: 'command',
      userId: actor.user.id,
      ip: actor.ip,
      risk: verdict.level,
      details: {
        action: 'held',
        commandId: pending.id,
        terminalId: terminal.id,
        command: redactCommand(command),
        workingDirectory,
        reasons: verdict.reasons,
      },
    });
    deps.metrics?.commandDecided(verdict.level, 'held');
    return pending;
  });
}
