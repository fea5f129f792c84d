import type { ExecuteOutcome } from './execute-command.js';

/** How a held command ended, as the agent that asked for it learns it (CONTRACT §12). */
export type CommandDecision =
  | { kind: 'executed'; outcome: ExecuteOutcome }
  | { kind: 'rejected' }
  | { kind: 'expired' }
  /** Confirmed but not run: its terminal had gone, or judged again it was refused, or it failed. */
  | { kind: 'failed'; code: string; message: string };

type Waiter = (decision: CommandDecision) => void;

/**
 * Where a paused agent waits for the decision on its held command. A held command is always
 * decided on the instance that holds its terminal (a confirmation elsewhere is carried there,
 * CONTRACT §9b), and the agent's terminal lives on the instance running the generation, so the
 * waiting and the deciding meet in one process: nothing here crosses instances.
 */
export class CommandDecisions {
  private readonly waiters = new Map<string, Set<Waiter>>();

  /** Tells whoever waits on `commandId` how it ended; nobody waiting is fine. */
  settle(commandId: string, decision: CommandDecision): void {
    const waiting = this.waiters.get(commandId);
    if (!waiting) return;
    this.waiters.delete(commandId);
    for (const waiter of waiting) waiter(decision);
  }

  /**
   * Resolves with the decision on `commandId`, or `null` when `signal` aborts first (the agent's
   * answer was stopped; the command stays pending for the pending list).
   */
  wait(commandId: string, signal: AbortSignal): Promise<CommandDecision | null> {
    if (signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      let waiting = this.waiters.get(commandId);
      if (!waiting) {
        waiting = new Set();
        this.waiters.set(commandId, waiting);
      }
      const set = waiting;
      const onAbort = () => {
        set.delete(waiter);
        if (set.size === 0 && this.waiters.get(commandId) === set) this.waiters.delete(commandId);
        resolve(null);
      };
      const waiter: Waiter = (decision) => {
        signal.removeEventListener('abort', onAbort);
        resolve(decision);
      };
      set.add(waiter);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Commands someone is waiting on (for tests and shutdown logs). */
  get waiting(): number {
    return this.waiters.size;
  }
}
