import type { ApiClient } from './api-client.js';
import type { ChatPanel } from './chat-panel.js';
import { announce, el, errorText } from './dom.js';
import { countOf, plainTitle } from './plain-title.js';

interface Summary {
  id: string;
  title: string;
  lastModified: string;
  messageCount: number;
}

/** Where the focus goes after the list is redrawn: a button of an item, or the item now at an index. */
type FocusTarget = { id: string; action: string } | { index: number };

const shortDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The sidebar: new conversation, search, and the saved conversations with open, rename, delete. */
export class ConversationList {
  readonly #search = el('input', { type: 'search', id: 'conversation-search', name: 'q', placeholder: 'Search conversations', autocomplete: 'off' });
  readonly #list = el('ul', { class: 'conversation-list', id: 'conversation-list' });
  readonly #status = el('p', { class: 'list-status', role: 'status' });
  readonly #newButton = el('button', { type: 'button', class: 'primary new-conversation' }, 'New conversation');
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #refreshing: Promise<void> = Promise.resolve();
  /** A rename is open: redrawing would throw away what is being typed, so refreshes wait for it. */
  #renaming = false;
  #focusAfter: FocusTarget | null = null;
  /** A conversation was opened or started from the list (the drawer closes on narrow screens). */
  onChosen: () => void = () => undefined;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly chat: ChatPanel,
  ) {
    const newButton = this.#newButton;
    newButton.addEventListener('click', () => {
      this.onChosen();
      this.chat
        .newConversation()
        .then(() => this.refresh())
        .catch((error: unknown) => {
          this.#status.textContent = `Could not start a conversation: ${errorText(error)}`;
        });
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
    // The rename ends with a refresh of its own.
    if (this.#renaming) return this.#refreshing;
    this.#refreshing = this.#refreshing.then(() => this.#load());
    return this.#refreshing;
  }

  async #load(): Promise<void> {
    const q = this.#search.value.trim();
    try {
      const page = await this.client.conversations.list.query({ limit: 100, offset: 0, ...(q ? { q } : {}) });
      const focus = this.#focusAfter ?? this.#focusInList();
      this.#focusAfter = null;
      this.#list.replaceChildren(...page.conversations.map((conversation) => this.#item(conversation)));
      if (focus) this.#restoreFocus(focus);
      this.#status.textContent = page.total === 0 ? (q ? 'No conversation matches.' : 'No saved conversations yet.') : q ? `${countOf(page.total, 'conversation')} found` : '';
    } catch (error) {
      this.#status.textContent = `Could not load conversations: ${errorText(error)}`;
    }
  }

  /** The list button that has the focus, if any: the redraw replaces it, so it is found again after. */
  #focusInList(): FocusTarget | null {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || !this.#list.contains(active)) return null;
    const id = active.closest('li')?.dataset.id;
    return id && active.dataset.action ? { id, action: active.dataset.action } : null;
  }

  #restoreFocus(target: FocusTarget): void {
    const items = [...this.#list.querySelectorAll<HTMLLIElement>('li[data-id]')];
    const item = 'id' in target ? items.find((candidate) => candidate.dataset.id === target.id) : (items[target.index] ?? items.at(-1));
    const action = 'id' in target ? target.action : 'open';
    const button = item?.querySelector<HTMLElement>(`[data-action="${action}"]`);
    (button ?? this.#newButton).focus();
  }

  #item(conversation: Summary): HTMLLIElement {
    const title = plainTitle(conversation.title) || 'Untitled';
    const current = conversation.id === this.chat.conversationId;
    const open = el(
      'button',
      { type: 'button', class: 'conversation-open', 'data-action': 'open', 'aria-current': current ? 'true' : undefined },
      el('span', { class: 'conversation-name' }, title),
      el('span', { class: 'conversation-meta' }, `${countOf(conversation.messageCount, 'message')} · ${shortDate.format(new Date(conversation.lastModified))}`),
    );
    const rename = el('button', { type: 'button', class: 'icon-button', 'data-action': 'rename', 'aria-label': `Rename ${title}`, title: 'Rename' }, '✎');
    const remove = el('button', { type: 'button', class: 'icon-button', 'data-action': 'delete', 'aria-label': `Delete ${title}`, title: 'Delete' }, '✕');
    const item = el('li', { class: current ? 'conversation current' : 'conversation', 'data-id': conversation.id }, open, rename, remove);
    open.addEventListener('click', () => {
      this.onChosen();
      this.chat
        .open(conversation.id)
        .then(() => this.refresh())
        .catch((error: unknown) => {
          this.#status.textContent = `Could not open ${title}: ${errorText(error)}`;
        });
    });
    rename.addEventListener('click', () => {
      this.#startRename(item, conversation);
    });
    remove.addEventListener('click', () => void this.#delete(item, conversation.id, title));
    return item;
  }

  /** Renames in place: Enter saves, Escape (or leaving the field) cancels. */
  #startRename(item: HTMLLIElement, conversation: Summary): void {
    // The title as shown: renaming a Markdown default title keeps its words, not its marks.
    const input = el('input', { type: 'text', value: plainTitle(conversation.title), maxlength: '200', 'aria-label': 'New title', class: 'rename-input' });
    const form = el('form', { class: 'rename-form' }, input);
    item.replaceChildren(form);
    this.#renaming = true;
    input.focus();
    input.select();
    // Back on the item's rename button afterwards, unless the user moved the focus away themselves.
    const finish = (refocus: boolean) => {
      input.removeEventListener('blur', onBlur);
      this.#renaming = false;
      if (refocus) this.#focusAfter = { id: conversation.id, action: 'rename' };
      return this.refresh();
    };
    const onBlur = () => void finish(false);
    input.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      // The rename's own Esc: it does not also close the drawer or stop an answer.
      event.preventDefault();
      void finish(true);
    });
    input.addEventListener('blur', onBlur);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      input.removeEventListener('blur', onBlur);
      input.readOnly = true;
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
        .finally(() => void finish(true));
    });
  }

  async #delete(item: HTMLLIElement, id: string, title: string): Promise<void> {
    if (!confirm(`Delete “${title}”? This cannot be undone.`)) return;
    // The item's buttons go with it: the focus moves to the item taking its place.
    this.#focusAfter = { index: [...this.#list.children].indexOf(item) };
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
