import type { ApiClient } from './api-client.js';
import type { ChatPanel } from './chat-panel.js';
import { announce, el, errorText } from './dom.js';

interface Summary {
  id: string;
  title: string;
  lastModified: string;
  messageCount: number;
}

const shortDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The sidebar: new conversation, search, and the saved conversations with open, rename, delete. */
export class ConversationList {
  readonly #search = el('input', { type: 'search', id: 'conversation-search', name: 'q', placeholder: 'Search conversations', autocomplete: 'off' });
  readonly #list = el('ul', { class: 'conversation-list', id: 'conversation-list' });
  readonly #status = el('p', { class: 'list-status', role: 'status' });
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #refreshing: Promise<void> = Promise.resolve();

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly chat: ChatPanel,
  ) {
    const newButton = el('button', { type: 'button', class: 'primary new-conversation' }, 'New conversation');
    newButton.addEventListener('click', () => {
      void this.chat.newConversation().then(() => this.refresh());
    });
    root.append(
      el('h2', { class: 'sidebar-title' }, 'Conversations'),
      newButton,
      el('div', { role: 'search' }, el('label', { for: 'conversation-search', class: 'sr-only' }, 'Search conversations'), this.#search),
      this.#status,
      this.#list,
    );
    this.#search.addEventListener('input', () => {
      clearTimeout(this.#searchTimer);
      // Waits for a pause in typing, so a word is one query, not one per letter.
      this.#searchTimer = setTimeout(() => void this.refresh(), 200);
    });
  }

  /** Reloads the list; calls made while one runs wait for it, so answers never land out of order. */
  refresh(): Promise<void> {
    this.#refreshing = this.#refreshing.then(() => this.#load());
    return this.#refreshing;
  }

  async #load(): Promise<void> {
    const q = this.#search.value.trim();
    try {
      const page = await this.client.conversations.list.query({ limit: 100, offset: 0, ...(q ? { q } : {}) });
      this.#list.replaceChildren(...page.conversations.map((conversation) => this.#item(conversation)));
      this.#status.textContent = page.total === 0 ? (q ? 'No conversation matches.' : 'No saved conversations yet.') : q ? `${page.total} found` : '';
    } catch (error) {
      this.#status.textContent = `Could not load conversations: ${errorText(error)}`;
    }
  }

  #item(conversation: Summary): HTMLLIElement {
    const title = conversation.title || 'Untitled';
    const current = conversation.id === this.chat.conversationId;
    const open = el(
      'button',
      { type: 'button', class: 'conversation-open', 'aria-current': current ? 'true' : undefined },
      el('span', { class: 'conversation-name' }, title),
      el('span', { class: 'conversation-meta' }, `${conversation.messageCount} messages · ${shortDate.format(new Date(conversation.lastModified))}`),
    );
    const rename = el('button', { type: 'button', class: 'icon-button', 'aria-label': `Rename ${title}`, title: 'Rename' }, '✎');
    const remove = el('button', { type: 'button', class: 'icon-button', 'aria-label': `Delete ${title}`, title: 'Delete' }, '✕');
    const item = el('li', { class: current ? 'conversation current' : 'conversation', 'data-id': conversation.id }, open, rename, remove);
    open.addEventListener('click', () => {
      void this.chat.open(conversation.id).then(() => this.refresh());
    });
    rename.addEventListener('click', () => {
      this.#startRename(item, conversation);
    });
    remove.addEventListener('click', () => void this.#delete(conversation.id, title));
    return item;
  }

  /** Renames in place: Enter saves, Escape (or leaving the field) cancels. */
  #startRename(item: HTMLLIElement, conversation: Summary): void {
    const input = el('input', { type: 'text', value: conversation.title, maxlength: '200', 'aria-label': 'New title', class: 'rename-input' });
    const form = el('form', { class: 'rename-form' }, input);
    item.replaceChildren(form);
    input.focus();
    input.select();
    const cancel = () => void this.refresh();
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') cancel();
    });
    input.addEventListener('blur', cancel);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      input.removeEventListener('blur', cancel);
      const title = input.value.trim();
      void this.client.conversations.rename
        .mutate({ id: conversation.id, title })
        .then(() => {
          this.chat.conversationRenamed(conversation.id, title);
          announce(`Renamed to ${title}`);
        })
        .catch((error: unknown) => {
          this.#status.textContent = `Could not rename: ${errorText(error)}`;
        })
        .finally(() => this.refresh());
    });
  }

  async #delete(id: string, title: string): Promise<void> {
    if (!confirm(`Delete “${title}”? This cannot be undone.`)) return;
    try {
      await this.client.conversations.delete.mutate({ id });
      await this.chat.conversationDeleted(id);
      announce(`Deleted ${title}`);
    } catch (error) {
      this.#status.textContent = `Could not delete: ${errorText(error)}`;
    }
    await this.refresh();
  }
}
