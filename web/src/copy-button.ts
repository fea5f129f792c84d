import { announce, el } from './dom.js';

const shownForMs = 2000;

/**
 * A button that puts `text()` on the clipboard and says so on itself ("Copied") for a moment.
 * The text is read at click time, so a button made while an answer streams copies all of it.
 */
export function copyButton(label: string, text: () => string, attributes: Record<string, string> = {}): HTMLButtonElement {
  const button = el('button', { type: 'button', class: 'copy-button', 'aria-label': label, ...attributes }, 'Copy');
  let timer: ReturnType<typeof setTimeout> | undefined;
  button.addEventListener('click', () => {
    clearTimeout(timer);
    navigator.clipboard.writeText(text()).then(
      () => {
        button.textContent = 'Copied';
        button.dataset.copied = 'true';
        announce('Copied to the clipboard');
      },
      () => {
        // Refused (no permission, or a page that is not a secure context).
        button.textContent = 'Copy failed';
        delete button.dataset.copied;
      },
    );
    timer = setTimeout(() => {
      button.textContent = 'Copy';
      delete button.dataset.copied;
    }, shownForMs);
  });
  return button;
}

/** Gives each code block of rendered Markdown a copy button of its own. */
export function addCodeCopyButtons(root: ParentNode): void {
  for (const pre of root.querySelectorAll('pre')) {
    // In a bar above the block, not in it: the block's text stays the code alone, and the button
    // covers none of it however narrow the screen.
    const block = el('div', { class: 'code-block' });
    pre.replaceWith(block);
    const bar = el(
      'div',
      { class: 'code-block-bar' },
      el('span', { class: 'code-language' }, pre.getAttribute('data-language') ?? ''),
      copyButton('Copy code', () => pre.textContent, { 'data-copy': 'code' }),
    );
    block.append(bar, pre);
  }
}
