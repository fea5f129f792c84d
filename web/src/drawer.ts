import { el } from './dom.js';

/** Where the conversation list stops being a column and becomes a drawer (styles.css agrees). */
const narrow = matchMedia('(max-width: 800px)');

/**
 * The conversation list on a narrow screen: a drawer over the page, opened and closed by a button
 * in the top bar (and a close button of its own, Escape, or a tap beside it). While it is open the
 * rest of the page is inert, so the focus stays in it; closing gives the focus back to the button
 * unless a conversation was chosen (the composer takes it then). On a wide screen the list is a
 * column of the page and the button is hidden.
 */
export class ConversationDrawer {
  readonly toggleButton = el(
    'button',
    { type: 'button', id: 'drawer-toggle', class: 'drawer-toggle', 'aria-controls': 'sidebar', 'aria-expanded': 'false', 'aria-label': 'Conversations' },
    '☰',
  );
  readonly #close = el('button', { type: 'button', class: 'icon-button drawer-close', 'aria-label': 'Close conversations', title: 'Close' }, '✕');
  readonly #backdrop = el('div', { class: 'drawer-backdrop', hidden: true });

  constructor(
    private readonly drawer: HTMLElement,
    /** The parts of the page behind the drawer. */
    private readonly behind: HTMLElement[],
  ) {
    drawer.prepend(this.#close);
    drawer.after(this.#backdrop);
    this.toggleButton.addEventListener('click', () => {
      if (this.isOpen) this.close(true);
      else this.open();
    });
    this.#close.addEventListener('click', () => {
      this.close(true);
    });
    this.#backdrop.addEventListener('click', () => {
      this.close(true);
    });
    drawer.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented || !this.isOpen) return;
      event.preventDefault();
      this.close(true);
    });
    // Widening the window makes the list a column again: nothing may stay inert.
    narrow.addEventListener('change', () => {
      if (!narrow.matches) this.close(false);
    });
  }

  get isOpen(): boolean {
    return document.body.classList.contains('drawer-open');
  }

  open(): void {
    if (!narrow.matches) return;
    document.body.classList.add('drawer-open');
    this.toggleButton.setAttribute('aria-expanded', 'true');
    this.#backdrop.hidden = false;
    for (const element of this.behind) element.inert = true;
    const first = this.drawer.querySelector<HTMLElement>('.new-conversation, button, input');
    first?.focus();
  }

  /** `refocus`: the focus goes back to the button (not when a conversation was chosen). */
  close(refocus: boolean): void {
    if (!this.isOpen) return;
    document.body.classList.remove('drawer-open');
    this.toggleButton.setAttribute('aria-expanded', 'false');
    this.#backdrop.hidden = true;
    for (const element of this.behind) element.inert = false;
    if (refocus) this.toggleButton.focus();
  }
}
