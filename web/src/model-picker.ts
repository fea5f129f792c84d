import type { ApiClient } from './api-client.js';
import type { Caller, CallerAware } from './caller.js';
import type { ConversationModel } from './chat-panel.js';
import { announce, el, errorText } from './dom.js';
import type { EventFeed, FeedEvent } from './event-feed.js';

interface Progress {
  completed: number;
  total: number;
}

/**
 * `<provider>/<name>` as the list shows it: a bare Ollama name means its `latest` tag, so the
 * active model `ollama/llama3.2` is the listed `ollama/llama3.2:latest`.
 */
function listedForm(value: string): string {
  if (!value.startsWith('ollama/')) return value;
  const name = value.slice('ollama/'.length);
  return name.includes(':', name.lastIndexOf('/') + 1) ? value : `${value}:latest`;
}

const percent = (progress: Progress | undefined) => (progress && progress.total > 0 ? Math.floor((progress.completed / progress.total) * 100) : 0);

/**
 * The model of the conversation on screen, and Ollama downloads (CONTRACT §12). The choice is sent
 * with each message (the chat body's `model`), so it changes no one's active model: a conversation
 * opens with the model of its last answer, a new one with the user's own active model, which
 * *Make default* sets (for this user only). Download progress arrives on the event feed; while a
 * download runs the list is also polled, so a feed that dropped cannot leave the bar frozen.
 * Choosing and *Make default* are everyone's; Download only for callers with models:download.
 */
export class ModelPicker implements ConversationModel, CallerAware {
  readonly #select = el('select', { id: 'model-select', name: 'model' });
  readonly #downloadName = el('input', { type: 'text', id: 'download-name', name: 'modelName', placeholder: 'e.g. qwen3:8b', required: true });
  readonly #downloadMenu = el('details', { class: 'picker-more', id: 'model-download', hidden: true });
  readonly #progress = el('progress', { id: 'download-progress', max: '100', value: '0', hidden: true, 'aria-label': 'Download progress' });
  readonly #status = el('span', { class: 'picker-status', id: 'model-status', role: 'status' });
  // Making it the default is a button, not the select's change: arrow keys on a closed select
  // change it too, and choosing for one conversation must not change the next ones.
  readonly #apply = el('button', { type: 'button', id: 'model-switch', disabled: true, title: 'Use this model for new conversations (yours only)' }, 'Make default');
  /** The user's own active model, `<provider>/<name>`. */
  #active = '';
  /** The model of the conversation on screen, once it has answers; else the active model applies. */
  #conversationModel: string | undefined;
  #poll: ReturnType<typeof setInterval> | undefined;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    feed: EventFeed,
  ) {
    const downloadForm = el(
      'form',
      { class: 'download-form' },
      el('label', { for: 'download-name' }, 'Ollama model'),
      this.#downloadName,
      el('button', { type: 'submit' }, 'Download'),
      this.#progress,
    );
    this.#downloadMenu.append(el('summary', {}, 'Download'), downloadForm);
    root.append(
      el(
        'div',
        { class: 'picker' },
        el('label', { for: 'model-select' }, 'Model'),
        this.#select,
        this.#apply,
        this.#downloadMenu,
        this.#status,
      ),
    );
    this.#select.addEventListener('change', () => {
      this.#apply.disabled = this.#select.value === this.#active;
      announce(`Messages in this conversation go to ${this.#select.value}`);
    });
    this.#apply.addEventListener('click', () => void this.#switch());
    downloadForm.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#download();
    });
    feed.on('model_download', (event) => {
      this.#showDownload(event);
    });
  }

  showFor(caller: Caller): void {
    this.#downloadMenu.hidden = !caller.may('models:download');
    if (this.#downloadMenu.hidden) this.#downloadMenu.open = false;
  }

  async refresh(): Promise<void> {
    try {
      const [{ models }, current] = await Promise.all([this.client.models.list.query({}), this.client.models.current.query({})]);
      const active = listedForm(`${current.provider}/${current.model}`);
      // The choice on screen survives the redraw (the download poll redraws every 2 s).
      const chosen = this.#select.value || this.#conversationModel || active;
      this.#select.replaceChildren(
        ...models.map((model) => {
          const value = `${model.provider}/${model.name}`;
          const note = model.status === 'available' ? '' : model.status === 'downloading' ? ` (downloading ${percent(model.progress)}%)` : ` (${model.status.replace('_', ' ')})`;
          return el('option', { value, selected: value === active }, `${value}${note}`);
        }),
      );
      this.#active = active;
      this.#selectIfListed(chosen);
      this.#apply.disabled = this.#select.value === this.#active;
      const downloading = models.find((model) => model.status === 'downloading');
      if (downloading) this.#setProgress(downloading.name, downloading.progress);
      this.#pollWhile(downloading !== undefined);
    } catch (error) {
      this.#status.textContent = `Models unavailable: ${errorText(error)}`;
    }
  }

  /** What the next message goes to: the choice on screen (undefined before the list loaded: the active model). */
  chosen(): string | undefined {
    return this.#select.value || undefined;
  }

  /** A conversation was opened: its last answer's model, else (a new one) the user's active model. */
  conversationShown(messages: readonly { role: string; provider?: string | undefined; model?: string | undefined }[]): void {
    const answered = messages.findLast((message) => message.role === 'assistant' && message.provider && message.model);
    this.#conversationModel = answered ? listedForm(`${answered.provider}/${answered.model}`) : undefined;
    this.#selectIfListed(this.#conversationModel ?? this.#active);
    this.#apply.disabled = this.#select.value === this.#active;
  }

  #selectIfListed(value: string): void {
    const wanted = listedForm(value);
    if ([...this.#select.options].some((option) => option.value === wanted)) this.#select.value = wanted;
  }

  async #switch(): Promise<void> {
    try {
      this.#apply.disabled = true;
      // The caller's own active model (CONTRACT §12): new conversations start with it; nobody else's changes.
      const { activeModel, provider } = await this.client.models.switch.mutate({ modelName: this.#select.value });
      this.#active = listedForm(`${provider}/${activeModel}`);
      this.#status.textContent = '';
      announce(`New conversations will use ${provider}/${activeModel}`);
    } catch (error) {
      this.#status.textContent = `Could not switch: ${errorText(error)}`;
      await this.refresh();
    }
  }

  async #download(): Promise<void> {
    const modelName = this.#downloadName.value.trim();
    if (!modelName) return;
    try {
      const { status } = await this.client.models.download.mutate({ modelName });
      this.#status.textContent = status === 'available' ? `${modelName} is already installed.` : `Downloading ${modelName}…`;
      await this.refresh();
    } catch (error) {
      this.#status.textContent = `Could not download: ${errorText(error)}`;
    }
  }

  #showDownload(event: FeedEvent): void {
    const name = String(event.modelName);
    if (event.status === 'downloading') {
      this.#setProgress(name, event.progress as Progress | undefined);
      return;
    }
    this.#progress.hidden = true;
    this.#status.textContent = event.status === 'available' ? `${name} downloaded.` : `${name} failed: ${typeof event.error === 'string' ? event.error : 'unknown error'}`;
    announce(this.#status.textContent);
    // Success needs no lasting note (the model is in the list now); a failure stays until the next try.
    if (event.status === 'available') {
      const shown = this.#status.textContent;
      setTimeout(() => {
        if (this.#status.textContent === shown) this.#status.textContent = '';
      }, 5000);
    }
    void this.refresh();
  }

  #setProgress(name: string, progress: Progress | undefined): void {
    this.#progress.hidden = false;
    this.#progress.value = percent(progress);
    this.#progress.setAttribute('aria-valuetext', `${name}: ${percent(progress)}%`);
  }

  #pollWhile(downloading: boolean): void {
    if (downloading && !this.#poll) this.#poll = setInterval(() => void this.refresh(), 2000);
    if (!downloading && this.#poll) {
      clearInterval(this.#poll);
      this.#poll = undefined;
      this.#progress.hidden = true;
    }
  }
}
