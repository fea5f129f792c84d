import { recordAudit } from '../audit/record-audit.js';
import type { Actor } from '../auth/actor.js';
import type { CommandDeps } from './command-deps.js';
import type { CommandDecision } from './command-decisions.js';

// setTimeout fires at once past this (a 32-bit delay); a longer lifetime is waited for in legs.
const LONGEST_TIMER_MS = 2_147_483_647;
const RETRY_MS = 5_000;

/**
 * Marks the command expired when it is still pending at its expiry, and tells the waiting agent.
 * When it is no longer pending, either the periodic expiry got there first (told here as well) or
 * a confirmation is running it now, whose end confirmCommand reports.
 */
async function expireIfUndecided(deps: CommandDeps, commandId: string, actor: Actor): Promise<void> {
  const decisions = deps.decisions;
  if (!decisions) return;
  const { count } = await deps.store.db.pendingCommand.updateMany({ where: { id: commandId, status: 'pending' }, data: { status: 'expired' } });
  if (count === 1) {
    await recordAudit(deps.store, { type: 'command', userId: actor.user.id, ip: actor.ip, details: { action: 'expired', commandId, by: 'agent_wait' } });
    decisions.settle(commandId, { kind: 'expired' });
    return;
  }
  const row = await deps.store.db.pendingCommand.findUnique({ where: { id: commandId }, select: { status: true } });
  if (row === null || row.status === 'expired') decisions.settle(commandId, { kind: 'expired' });
}

/**
 * Waits for the decision on a command the agent's run_command got held (CONTRACT §12: the
 * generation pauses, its stream open): confirmed and run, rejected, or expired at `expiresAt`.
 * `null` when the answer is stopped first; the command then stays pending, as any held one.
 */
export async function awaitHeldCommand(
  deps: CommandDeps,
  held: { commandId: string; expiresAt: Date; actor: Actor },
  signal: AbortSignal,
): Promise<CommandDecision | null> {
  const decisions = deps.decisions;
  // Callers check for the registry first; without one nothing could ever decide.
  if (!decisions) return null;
  const decided = decisions.wait(held.commandId, signal);
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const arm = (delay: number) => {
    if (over) return;
    timer = setTimeout(() => {
      const left = held.expiresAt.getTime() - Date.now();
      if (left > 0) {
        arm(left);
        return;
      }
      // The database unreachable: tried again shortly (a confirmation is refused by the expiry
      // time meanwhile, so nothing can run late).
      expireIfUndecided(deps, held.commandId, held.actor).catch(() => {
        arm(RETRY_MS);
      });
    }, Math.min(Math.max(0, delay), LONGEST_TIMER_MS));
  };
  arm(held.expiresAt.getTime() - Date.now());
  try {
    return await decided;
  } finally {
    over = true;
    clearTimeout(timer);
  }
}
