import { el } from './dom.js';

export interface QuestionEditorHooks {
  /** The edited text, sent: return false to keep the editor open (an answer is still coming). */
  send(message: string): boolean;
  /** The editor is gone (sent or cancelled). */
  closed(): void;
}

/**
 * Edit and resend, in place: the question's text becomes a field inside its article, with Send
 * (or Enter) and Cancel (or Esc, which does nothing else: it neither stops an answer nor closes the
 * drawer). Cancel gives the focus back to the question's Edit button.
 */
export function openQuestionEditor(article: HTMLElement, hooks: QuestionEditorHooks): void {
  const input = el('textarea', { class: 'edit-input', rows: '3', 'aria-label': 'Edited question' });
  input.value = article.querySelector('.user-text')?.textContent ?? '';
  const cancel = el('button', { type: 'button', class: 'edit-cancel' }, 'Cancel');
  const form = el(
    'form',
    { class: 'message-editor' },
    input,
    el('div', { class: 'editor-buttons' }, cancel, el('button', { type: 'submit', class: 'primary edit-send' }, 'Send')),
  );
  article.classList.add('editing');
  article.append(form);
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
  const close = () => {
    form.remove();
    article.classList.remove('editing');
    hooks.closed();
  };
  cancel.addEventListener('click', () => {
    close();
    article.querySelector<HTMLElement>('.edit-message')?.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      cancel.click();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const message = input.value.trim();
    if (message && hooks.send(message)) close();
  });
}
