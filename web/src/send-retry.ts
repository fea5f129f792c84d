import type { ApiClient } from './api-client.js';
import { el, errorText } from './dom.js';
import { quotaNotice, quotaRefusalOf, quotaSummary } from './quota-refusal.js';
import { shownMessages } from './shown-messages.js';

/**
 * One request for an answer: a new question, the last question again (Regenerate, or Retry of a
 * question the server kept), or an edited question replacing `article` and all after it.
 */
export type Ask = { kind: 'send'; message: string } | { kind: 'regenerate'; message: string } | { kind: 'edit'; message: string; article: HTMLElement };

/** What Retry needs of the panel it sits in. */
export interface RetryHost {
  shownConversation(): string | null;
  /** A message is on its way or the shown conversation's answer is still coming. */
  busy(): boolean;
  /** Shows the conversation as stored. */
  reload(conversationId: string): Promise<void>;
  ask(ask: Ask): Promise<void>;
  /** Gives the text of a question not sent back to the composer, unless something new was typed. */
  giveBack(message: string): void;
  /** Shows a notice at the end of the message area (a quota refusal). */
  showNotice(notice: HTMLElement): void;
}

/** A request for an answer that failed, and what it had changed on screen. */
export interface FailedAsk {
  ask: Ask;
  error: unknown;
  conversationId: string | null;
  /** The question it put on screen, if any. */
  sent: HTMLElement | null;
  /** What it hid, to be replaced once the server took the request. */
  replaced: HTMLElement[];
  /** Another navigation began since the request: what it shows is not ours to change. */
  stale: () => boolean;
}

/**
 * The composer's failure line and its Retry button. A failed request leaves the conversation in
 * one of two states, and Retry must act on the right one: a question stored without an answer is
 * answered again, a question never stored is sent again.
 */
export class SendRetry {
  readonly button = el('button', { type: 'button', id: 'retry-button', hidden: true }, 'Retry');
  /** What Retry asks for again, or null when there is nothing to retry. */
  #pending: { ask: Ask; conversationId: string } | null = null;
  #notice: HTMLElement | null = null;

  constructor(
    private readonly client: ApiClient,
    private readonly status: HTMLElement,
    private readonly host: RetryHost,
  ) {
    this.button.addEventListener('click', () => void this.#retry());
  }

  offer(text: string, ask: Ask, conversationId: string): void {
    this.status.textContent = text;
    this.#pending = { ask, conversationId };
    this.button.hidden = false;
  }

  clear(): void {
    this.#notice?.remove();
    this.#notice = null;
    this.status.textContent = '';
    this.#pending = null;
    this.button.hidden = true;
  }

  /**
   * A request for an answer failed. Whether its question is stored decides what the screen says
   * and what Retry does: a provider failing after the question was stored leaves it in the
   * conversation (sending the text again would store it twice), so the question stays on screen
   * and Retry asks for an answer to it; a request refused before anything was stored gives its
   * text back and Retry sends it again.
   */
  async failed({ ask, error, conversationId, sent, replaced, stale }: FailedAsk): Promise<void> {
    if (conversationId === null) {
      this.status.textContent = `Not sent: ${errorText(error)}`;
      return;
    }
    if (this.#quotaRefused({ ask, error, conversationId, sent, replaced, stale })) return;
    const stored = await this.#unanswered(conversationId, ask.message).catch(() => null);
    if (stale() || conversationId !== this.host.shownConversation()) {
      sent?.remove();
      return;
    }
    if (stored === true) {
      // What the server holds now (a replaced answer may or may not be superseded by now).
      if (ask.kind !== 'send') await this.host.reload(conversationId);
      this.offer(`No answer: ${errorText(error)}. Your question is saved; Retry asks for an answer to it.`, { kind: 'regenerate', message: ask.message }, conversationId);
      return;
    }
    sent?.remove();
    for (const element of replaced) element.hidden = false;
    if (ask.kind === 'edit' && !ask.article.isConnected) {
      // The question edited is no longer on screen (the conversation was shown again): nothing to retry.
      this.status.textContent = `Not sent: ${errorText(error)}`;
      return;
    }
    if (ask.kind === 'send') this.host.giveBack(ask.message);
    const unknown = stored === null ? ' (it may have been saved; Retry checks first)' : '';
    this.offer(`Not sent: ${errorText(error)}${unknown}`, ask, conversationId);
  }

  /**
   * A quota refused the request before the model was asked; the server took back what it had
   * stored (CONTRACT §13), so the screen goes back to how it was. Retry is not offered: it would
   * be refused again until the quota's period ends, which the notice names instead.
   */
  #quotaRefused({ ask, error, conversationId, sent, replaced, stale }: FailedAsk): boolean {
    const quota = quotaRefusalOf(error);
    if (!quota) return false;
    sent?.remove();
    if (stale() || conversationId !== this.host.shownConversation()) return true;
    for (const element of replaced) element.hidden = false;
    if (ask.kind === 'send') this.host.giveBack(ask.message);
    this.status.textContent = quotaSummary(quota);
    const outcome =
      ask.kind === 'send'
        ? 'Your message was not sent; it is back in the message box.'
        : ask.kind === 'edit'
          ? 'Your edit was not sent.'
          : 'No new answer was asked for.';
    this.#notice?.remove();
    this.#notice = quotaNotice(quota, outcome);
    this.host.showNotice(this.#notice);
    return true;
  }

  /** Retry checks again whether the question is stored: then it asks for an answer, else it resends. */
  async #retry(): Promise<void> {
    const retry = this.#pending;
    if (!retry || this.host.busy() || retry.conversationId !== this.host.shownConversation()) return;
    let ask = retry.ask;
    try {
      if (ask.kind !== 'regenerate' && (await this.#unanswered(retry.conversationId, ask.message))) {
        await this.host.reload(retry.conversationId);
        ask = { kind: 'regenerate', message: ask.message };
      }
    } catch (error) {
      this.status.textContent = `Still failing: ${errorText(error)}`;
      return;
    }
    await this.host.ask(ask);
  }

  /** Whether the conversation ends with this question, unanswered. */
  async #unanswered(conversationId: string, question: string): Promise<boolean> {
    const { messages } = await this.client.conversations.get.query({ id: conversationId });
    const last = shownMessages(messages).at(-1);
    return last?.role === 'user' && last.content.trim() === question.trim();
  }
}
