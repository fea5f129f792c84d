import { el } from './dom.js';

/**
 * A page over the chat (Usage, Policies): a modal dialog with a heading and a close button, full
 * screen on a narrow one. Being modal, the page behind is inert and Escape closes it (the chat's
 * Escape, which stops an answer, stands aside while a dialog is open). Closing gives the focus
 * back to the button that opened it or, when that is out of sight (in the closed drawer of a
 * narrow screen), to `fallbackFocus`.
 */
export class PageDialog {
  readonly element: HTMLDialogElement;
  readonly body = el('div', { class: 'page-dialog-body' });
  #opener: HTMLElement | null = null;

  constructor(
    id: string,
    title: string,
    private readonly fallbackFocus: () => HTMLElement | null,
  ) {
    const close = el('button', { type: 'button', class: 'icon-button page-dialog-close', id: `${id}-close`, 'aria-label': `Close ${title.toLowerCase()}`, title: 'Close' }, '✕');
    this.element = el(
      'dialog',
      { class: 'page-dialog', id, 'aria-labelledby': `${id}-title` },
      el('header', { class: 'page-dialog-header' }, el('h2', { id: `${id}-title` }, title), close),
      this.body,
    );
    close.addEventListener('click', () => {
      this.element.close();
    });
    this.element.addEventListener('close', () => {
      // An element out of sight (display or visibility) refuses the focus: then the fallback takes it.
      this.#opener?.focus();
      if (!this.#opener || document.activeElement !== this.#opener) this.fallbackFocus()?.focus();
      this.#opener = null;
    });
    document.body.append(this.element);
  }

  get isOpen(): boolean {
    return this.element.open;
  }

  open(opener: HTMLElement | null): void {
    if (this.element.open) return;
    this.#opener = opener;
    this.element.showModal();
  }
}
