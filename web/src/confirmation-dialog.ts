import { appCodeOf, type ApiClient } from './api-client.js';
import type { Caller, CallerAware } from './caller.js';
import { announce, el, errorText } from './dom.js';

export interface HeldCommand {
  commandId: string;
  /** The model's tool call that asked for it, when an agent did. */
  toolCallId?: string | undefined;
  command: string;
  risk: string;
  reasons: string[];
  /** The terminal it is held in. */
  terminalId?: string | undefined;
}

/** What became of a held command once someone decided. */
export type HeldOutcome =
  | { kind: 'ran'; exitCode?: number | undefined; output?: string | undefined; timedOut?: boolean | undefined }
  | { kind: 'rejected' }
  /** Decided elsewhere, expired, or its terminal ended. */
  | { kind: 'gone' };

/** The outcome in a few words: "Ran, exit code 0", "Rejected". */
export function outcomeText(outcome: HeldOutcome): string {
  switch (outcome.kind) {
    case 'ran':
      return outcome.timedOut ? 'Started; still running' : `Ran, exit code ${outcome.exitCode === undefined ? 'unknown' : String(outcome.exitCode)}`;
    case 'rejected':
      return 'Rejected';
    case 'gone':
      return 'No longer waiting (decided elsewhere or expired)';
  }
}

/** The last lines of a command's output, enough to see how it ended. */
function tail(output: string, lines = 12, characters = 2000): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n').slice(-characters);
}

/**
 * Held commands (CONTRACT §4: high risk, waiting for their issuer) shown one at a time in a modal
 * dialog with Run and Reject. They come from the event feed, the terminal socket and, at start,
 * the pending list, so each is queued once by its id.
 */
export class ConfirmationDialog implements CallerAware {
  readonly #dialog = el('dialog', { class: 'confirm-dialog', id: 'confirm-dialog', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-command' });
  readonly #command = el('pre', { id: 'confirm-command', class: 'confirm-command' });
  readonly #risk = el('p', { class: 'confirm-risk' });
  readonly #reasons = el('ul', { class: 'confirm-reasons' });
  readonly #error = el('p', { class: 'confirm-error', role: 'alert' });
  readonly #run = el('button', { type: 'button', class: 'danger', id: 'confirm-run' }, 'Run command');
  readonly #reject = el('button', { type: 'button', id: 'confirm-reject' }, 'Reject');
  readonly #outcome = el('p', { class: 'confirm-outcome', id: 'confirm-outcome', role: 'status' });
  readonly #output = el('pre', { class: 'confirm-output', id: 'confirm-output', hidden: true });
  readonly #closeButton = el('button', { type: 'button', class: 'primary', id: 'confirm-close', hidden: true }, 'Close');
  readonly #intro = el('p', {}, 'This command was held because it is risky. Run it only if you expected it.');
  readonly #title = el('h2', { id: 'confirm-title' }, 'Confirm a held command');
  readonly #queue: HeldCommand[] = [];
  readonly #seen = new Set<string>();
  #shown: HeldCommand | null = null;
  #answering = false;
  /**
   * Held commands are listed and decided with terminal:execute (CONTRACT §5). Nobody without it
   * can have one held, and asking anyway would only be refused, each refusal audited.
   */
  #mayDecide = false;

  /** Told of each command queued and of each decided (or gone) here: a paused answer shows it waiting. */
  onHeld: (held: HeldCommand) => void = () => undefined;
  onDecided: (held: HeldCommand, outcome: HeldOutcome) => void = () => undefined;

  constructor(private readonly client: ApiClient) {
    this.#dialog.append(
      this.#title,
      this.#intro,
      this.#command,
      this.#risk,
      this.#reasons,
      this.#error,
      this.#outcome,
      this.#output,
      el('div', { class: 'dialog-buttons' }, this.#reject, this.#run, this.#closeButton),
    );
    document.body.append(this.#dialog);
    this.#run.addEventListener('click', () => void this.#answer(true));
    this.#reject.addEventListener('click', () => void this.#answer(false));
    this.#closeButton.addEventListener('click', () => {
      this.#dialog.close();
      this.#next();
    });
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

  showFor(caller: Caller): void {
    this.#mayDecide = caller.may('terminal:execute');
  }

  /** Queues the commands already waiting (none when system commands are off or the caller may not run any). */
  async loadPending(): Promise<void> {
    if (!this.#mayDecide) return;
    try {
      const { pending } = await this.client.security.pending.query({ all: false });
      for (const held of pending) this.add({ commandId: held.id, command: held.command, risk: held.risk, reasons: held.reasons, terminalId: held.terminalId });
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
    this.#showDecision(true);
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
    let outcome: HeldOutcome;
    try {
      const reply = await this.client.security.confirm.mutate({ commandId: held.commandId, confirmed });
      outcome = confirmed && reply.executed !== false ? { kind: 'ran', exitCode: reply.exitCode, output: reply.output, timedOut: reply.timedOut } : { kind: 'rejected' };
    } catch (error) {
      // Gone (expired, answered elsewhere) is not worth keeping the dialog open for.
      if (appCodeOf(error) !== 'NOT_FOUND') {
        this.#error.textContent = errorText(error);
        this.#run.disabled = false;
        this.#reject.disabled = false;
        return;
      }
      outcome = { kind: 'gone' };
    } finally {
      this.#answering = false;
    }
    announce(`Command: ${outcomeText(outcome)}.`);
    this.onDecided(held, outcome);
    if (this.#shown !== held) return;
    this.#shown = null;
    // An agent's command goes on in its answer, which shows the outcome in its tool call; a
    // terminal's command is shown here, with how it ended, until Close.
    if (held.toolCallId !== undefined || outcome.kind === 'gone') {
      this.#dialog.close();
      this.#next();
      return;
    }
    this.#showDecision(false);
    this.#title.textContent = outcome.kind === 'ran' ? 'Held command ran' : 'Held command rejected';
    this.#outcome.textContent = outcomeText(outcome);
    this.#outcome.dataset.outcome = outcome.kind === 'ran' ? (outcome.exitCode === 0 ? 'success' : 'failure') : outcome.kind;
    const output = outcome.kind === 'ran' && outcome.output ? tail(outcome.output) : '';
    this.#output.textContent = output;
    this.#output.hidden = output === '';
    this.#closeButton.focus();
  }

  /** The dialog asks (Run, Reject) or, once decided, tells how it went (Close). */
  #showDecision(asking: boolean): void {
    this.#title.textContent = 'Confirm a held command';
    this.#intro.hidden = !asking;
    this.#risk.hidden = !asking;
    this.#reasons.hidden = !asking;
    this.#run.hidden = !asking;
    this.#reject.hidden = !asking;
    this.#closeButton.hidden = asking;
    this.#outcome.hidden = asking;
    this.#output.hidden = true;
    if (asking) this.#outcome.textContent = '';
  }
}
