import type { AnswerPart } from './answer-parts.js';
import { addCodeCopyButtons, copyButton } from './copy-button.js';
import { el } from './dom.js';
import { renderMarkdown } from './markdown.js';

const pretty = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value, null, 2));

/** A tool call shown inline: collapsed to its name and state, its arguments and result inside. */
function toolElement(part: Extract<AnswerPart, { kind: 'tool' }>): HTMLElement {
  const result = typeof part.result === 'object' && part.result !== null ? (part.result as Record<string, unknown>) : {};
  const failed = 'error' in result;
  const state = !part.finished
    ? part.waiting
      ? 'waiting for confirmation'
      : 'running…'
    : failed
      ? 'failed'
      : result.status === 'pending_confirmation'
        ? 'waiting for confirmation'
        : result.rejected === true
          ? 'rejected'
          : result.expired === true
            ? 'expired'
            : 'done';
  const look = !part.finished ? (part.waiting ? 'waiting' : 'running') : failed ? 'failed' : 'done';
  return el(
    'details',
    { class: `tool-call tool-${look}`, 'data-tool': part.name },
    el('summary', {}, el('span', { class: 'tool-name' }, `Tool: ${part.name}`), ' ', el('span', { class: 'tool-state' }, `(${state})`)),
    el('div', { class: 'tool-section-label' }, 'Arguments'),
    el('pre', { class: 'tool-params' }, pretty(part.params)),
    part.finished && el('div', { class: 'tool-section-label' }, 'Result'),
    part.finished && el('pre', { class: 'tool-result' }, pretty(part.result)),
  );
}

function partElement(part: AnswerPart): HTMLElement {
  switch (part.kind) {
    case 'text': {
      const body = el('div', { class: 'markdown' });
      body.append(renderMarkdown(part.text));
      addCodeCopyButtons(body);
      return body;
    }
    case 'tool':
      return toolElement(part);
    case 'error':
      return el('p', { class: 'answer-error', role: 'alert' }, `Error (${part.code}): ${part.message}`);
  }
}

/**
 * An assistant answer. While it streams, changed parts are redrawn at most once a frame (a fast
 * model sends far more chunks than the screen can show). The article is aria-busy meanwhile, which
 * tells a screen reader moving through it that it is still incomplete; #messages is not a live
 * region (opening a conversation would read it all out), so the start and the end of an answer
 * are said through the page's announcer instead.
 */
export class AnswerView {
  readonly element: HTMLElement;
  readonly #body: HTMLElement;
  readonly #footer: HTMLElement;
  /** Copy and Regenerate: shown once the answer is complete. */
  readonly #actions: HTMLElement;
  readonly #partElements: HTMLElement[] = [];
  readonly #dirty = new Set<number>();
  #frame = 0;

  constructor(readonly parts: AnswerPart[], streaming: boolean) {
    this.#body = el('div', { class: 'answer-body' });
    this.#footer = el('footer', { class: 'message-footer' });
    this.#actions = el(
      'div',
      { class: 'message-actions', hidden: streaming },
      copyButton('Copy answer', () => this.text(), { 'data-copy': 'answer' }),
      // The chat panel offers it on the conversation's last answer only, when nothing runs.
      el('button', { type: 'button', class: 'regenerate', hidden: true, title: 'Answer the last question again' }, 'Regenerate'),
    );
    this.element = el(
      'article',
      { class: 'message assistant', 'aria-label': 'Assistant', 'aria-busy': streaming ? 'true' : 'false' },
      this.#body,
      this.#footer,
      this.#actions,
    );
    parts.forEach((_part, index) => this.#dirty.add(index));
    this.#draw();
  }

  changed(index: number): void {
    if (index < 0) return;
    this.#dirty.add(index);
    this.#frame ||= requestAnimationFrame(() => {
      this.#draw();
    });
  }

  /** The stream ended: draw what is left, say how it ended, and let screen readers read it. */
  finish(note?: string): void {
    cancelAnimationFrame(this.#frame);
    this.#draw();
    if (note) this.#footer.textContent = note;
    this.element.setAttribute('aria-busy', 'false');
    this.element.classList.remove('streaming');
    this.#actions.hidden = false;
  }

  /** The answer's text as the model wrote it (Markdown), for the clipboard. */
  text(): string {
    return this.parts
      .filter((part) => part.kind === 'text')
      .map((part) => part.text)
      .join('\n\n');
  }


  /** The connection to the stream broke: say so and offer to follow it again. */
  interrupted(note: string, resume: () => void): void {
    const button = el('button', { type: 'button', class: 'resume' }, 'Resume');
    this.#footer.replaceChildren(note, ' ', button);
    button.addEventListener('click', () => {
      this.#footer.replaceChildren();
      resume();
    });
  }

  #draw(): void {
    this.#frame = 0;
    for (const index of [...this.#dirty].sort((a, b) => a - b)) {
      const part = this.parts[index];
      if (!part) continue;
      const next = partElement(part);
      const previous = this.#partElements[index];
      // An open tool panel stays open while its result arrives.
      if (previous instanceof HTMLDetailsElement && next instanceof HTMLDetailsElement) next.open = previous.open;
      if (previous) previous.replaceWith(next);
      else this.#body.append(next);
      this.#partElements[index] = next;
    }
    this.#dirty.clear();
  }
}

/**
 * A question. Its Edit button carries its label in CSS and aria-label, not as text: the article's
 * text stays exactly the question (what a reader, a copy or a test reads from it).
 */
export function userMessageElement(text: string, id?: string): HTMLElement {
  return el(
    'article',
    { class: 'message user', 'aria-label': 'You', 'data-id': id },
    el('p', { class: 'user-text' }, text),
    el('button', { type: 'button', class: 'edit-message', 'aria-label': 'Edit and resend this question', title: 'Edit and resend', hidden: true }),
  );
}
