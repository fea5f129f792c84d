import { appCodeOf, type ApiClient } from './api-client.js';
import { announce, el, errorText } from './dom.js';

export interface HeldCommand {
  commandId: string;
  /** The model's tool call that asked for it, when an agent did. */
  toolCallId?: string | undefined;
  command: string;
  risk: string;
  reasons: string[];
}

/**
 * Held commands (CONTRACT §4: high risk, waiting for their issuer) shown one at a time in a modal
 * dialog with Run and Reject. They come from the event feed, the terminal socket and, at start,
 * the pending list, so each is queued once by its id.
 */
export class ConfirmationDialog {
  readonly #dialog = el('dialog', { class: 'confirm-dialog', id: 'confirm-dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-command' });
  readonly #command = el('pre', { id: 'confirm-command', class: 'confirm-command' });
  readonly #risk = el('p', { class: 'confirm-risk' });
  readonly #reasons = el('ul', { class: 'confirm-reasons' });
  readonly #error = el('p', { class: 'confirm-error', role: 'alert' });
  readonly #run = el('button', { type: 'button', class: 'danger', id: 'confirm-run' }, 'Run command');
  readonly #reject = el('button', { type: 'button', id: 'confirm-reject' }, 'Reject');
  readonly #queue: HeldCommand[] = [];
  readonly #seen = new Set<string>();
  #shown: HeldCommand | null = null;
  #answering = false;

  /** Told of each command queued and of each decided (or gone) here: a paused answer shows it waiting. */
  onHeld: (held: HeldCommand) => void = () => undefined;
  onDecided: (commandId: string) => void = () => undefined;

  constructor(private readonly client: ApiClient) {
    this.#dialog.append(
      el('h2', { id: 'confirm-title' }, 'Confirm a held command'),
      el('p', {}, 'This command was held because it is risky. Run it only if you expected it.'),
      this.#command,
      this.#risk,
      this.#reasons,
      this.#error,
      el('div', { class: 'dialog-buttons' }, this.#reject, this.#run),
    );
    document.body.append(this.#dialog);
    this.#run.addEventListener('click', () => void this.#answer(true));
    this.#reject.addEventListener('click', () => void this.#answer(false));
    // Escape means "not now": the command stays pending and comes back at the next start.
    this.#dialog.addEventListener('cancel', (event) => {
      // While Run or Reject is on its way the dialog stays: closing it now would let that answer's
      // end close the next command's dialog (or drop it from the queue) when it arrives.
      if (this.#answering) {
        event.preventDefault();
        return;
      }
      this.#shown = null;
      queueMicrotask(() => {
        this.#next();
      });
    });
  }

  /** Queues the commands already waiting (none when system commands are off). */
  async loadPending(): Promise<void> {
    try {
      const { pending } = await this.client.security.pending.query({ all: false });
      for (const held of pending) this.add({ commandId: held.id, command: held.command, risk: held.risk, reasons: held.reasons });
    } catch (error) {
      if (appCodeOf(error) !== 'SECURITY_VIOLATION' && appCodeOf(error) !== 'FORBIDDEN') console.warn('pending commands unavailable', error);
    }
  }

  add(held: HeldCommand): void {
    if (this.#seen.has(held.commandId)) return;
    this.#seen.add(held.commandId);
    this.#queue.push(held);
    this.onHeld(held);
    if (!this.#shown) this.#next();
  }

  #next(): void {
    const held = this.#queue.shift();
    if (!held) return;
    this.#shown = held;
    this.#command.textContent = held.command;
    this.#risk.textContent = `Risk: ${held.risk}`;
    this.#reasons.replaceChildren(...held.reasons.map((reason) => el('li', {}, reason)));
    this.#error.textContent = '';
    this.#run.disabled = false;
    this.#reject.disabled = false;
    if (!this.#dialog.open) this.#dialog.showModal();
    // Reject has the focus: Enter on an unread dialog must not run a risky command.
    this.#reject.focus();
  }

  async #answer(confirmed: boolean): Promise<void> {
    const held = this.#shown;
    if (!held) return;
    this.#run.disabled = true;
    this.#reject.disabled = true;
    this.#answering = true;
    try {
      const reply = await this.client.security.confirm.mutate({ commandId: held.commandId, confirmed });
      announce(
        !confirmed ? 'Command rejected.' : reply.timedOut ? 'Command started; it is still running.' : `Command ran, exit code ${String(reply.exitCode ?? '?')}.`,
      );
    } catch (error) {
      // Gone (expired, answered elsewhere) is not worth keeping the dialog open for.
      if (appCodeOf(error) !== 'NOT_FOUND') {
        this.#error.textContent = errorText(error);
        this.#run.disabled = false;
        this.#reject.disabled = false;
        return;
      }
    } finally {
      this.#answering = false;
    }
    this.onDecided(held.commandId);
    if (this.#shown !== held) return;
    this.#shown = null;
    this.#dialog.close();
    this.#next();
  }
}
