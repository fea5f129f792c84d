import type { ApiClient } from './api-client.js';
import { openQuestionEditor } from './question-editor.js';
import type { Ask } from './send-retry.js';
import { shownMessages } from './shown-messages.js';

/** What the message buttons need of the panel they sit in. */
export interface MessageActionsHost {
  /** A message is on its way or the shown conversation's answer is still coming. */
  busy(): boolean;
  ask(ask: Ask): Promise<void>;
  /** Shows the conversation as stored. */
  reload(conversationId: string): Promise<void>;
  /** An editor opened or closed: which buttons are offered changes. */
  editingChanged(): void;
  focusComposer(): void;
}

/**
 * The buttons on the messages (CONTRACT §12): Regenerate on the last answer answers its question
 * again; Edit on a question opens it in place, and sending the edit replaces it and what followed.
 */
export class MessageActions {
  /** The question being edited in place, if any. */
  #editing: HTMLElement | null = null;

  constructor(
    private readonly messages: HTMLElement,
    private readonly client: ApiClient,
    private readonly host: MessageActionsHost,
  ) {
    messages.addEventListener('click', (event) => {
      const button = event.target instanceof Element ? event.target.closest('button') : null;
      const article = button?.closest<HTMLElement>('article.message');
      if (!button || !article) return;
      if (button.classList.contains('regenerate')) void this.regenerate();
      else if (button.classList.contains('edit-message')) this.#startEdit(article);
    });
  }

  /** Answers the conversation's last question again; the answer it had stays stored, superseded. */
  async regenerate(): Promise<void> {
    if (this.host.busy()) return;
    const question = [...this.messages.querySelectorAll('article.message.user .user-text')].at(-1)?.textContent ?? '';
    await this.host.ask({ kind: 'regenerate', message: question });
  }

  /** The messages were shown anew: an editor open in the old ones went with them. */
  forgetEdit(): void {
    this.#editing = null;
  }

  /** What a request replaces on screen: the last answer for Regenerate, the question edited and all after it. */
  replacedBy(ask: Ask): HTMLElement[] {
    if (ask.kind === 'regenerate') {
      const last = this.messages.lastElementChild;
      return last instanceof HTMLElement && last.matches('article.message.assistant') ? [last] : [];
    }
    if (ask.kind === 'send') return [];
    const elements: HTMLElement[] = [];
    for (let node: Element | null = ask.article; node; node = node.nextElementSibling) if (node instanceof HTMLElement) elements.push(node);
    return elements;
  }

  /**
   * The stored id of a question on screen. A question sent from this page has none until the
   * conversation is read again: it is found by its place among the messages, and its text must match.
   */
  async idOf(article: HTMLElement, conversationId: string): Promise<string> {
    if (article.dataset.id) return article.dataset.id;
    const index = [...this.messages.querySelectorAll('article.message')].indexOf(article);
    const { messages } = await this.client.conversations.get.query({ id: conversationId });
    const stored = shownMessages(messages)[index];
    const text = article.querySelector('.user-text')?.textContent ?? '';
    if (stored?.role !== 'user' || stored.content !== text || !stored.id) {
      await this.host.reload(conversationId);
      throw new Error('this conversation changed elsewhere; it is shown as it is now, edit it again');
    }
    article.dataset.id = stored.id;
    return stored.id;
  }

  /**
   * Edit and Regenerate (on the last finished answer) are offered only when nothing is being sent
   * or answered (`busy`) and no question is open for editing.
   */
  showButtons(busy: boolean): void {
    const idle = !busy && this.#editing === null;
    for (const button of this.messages.querySelectorAll<HTMLButtonElement>('button.edit-message')) button.hidden = !idle;
    for (const button of this.messages.querySelectorAll<HTMLButtonElement>('button.regenerate')) button.hidden = true;
    const last = this.messages.lastElementChild;
    const regenerate = last?.matches('article.message.assistant[aria-busy="false"]') ? last.querySelector<HTMLButtonElement>('button.regenerate') : null;
    if (regenerate && idle) regenerate.hidden = false;
  }

  #startEdit(article: HTMLElement): void {
    if (this.host.busy() || this.#editing) return;
    this.#editing = article;
    openQuestionEditor(article, {
      send: (message) => {
        // An answer started meanwhile (from the composer): the edit waits, still open, until it ends.
        if (this.host.busy()) return false;
        void this.host.ask({ kind: 'edit', message, article }).then(() => {
          this.host.focusComposer();
        });
        return true;
      },
      closed: () => {
        this.#editing = null;
        this.host.editingChanged();
      },
    });
    this.host.editingChanged();
  }
}
