import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import { appCodeOf, type ApiClient } from './api-client.js';
import { applyEvent, partsOfStoredAnswer } from './answer-parts.js';
import { AnswerView, userMessageElement } from './answer-view.js';
import { announce, el, errorText } from './dom.js';
import { clearRunningStream, loadRunningStream, saveRunningStream, type RunningStream } from './running-stream.js';

type Mode = 'chat' | 'assistant' | 'agent';

let unloading = false;
addEventListener('pagehide', () => {
  unloading = true;
});
addEventListener('pageshow', () => {
  unloading = false;
});
type StoredMessage = { role: string; content: string; toolCalls?: unknown[] | undefined };

const endNotes: Record<string, string> = {
  aborted: 'Stopped.',
  error: 'The answer ended with an error.',
  length: 'Cut off at the length limit.',
  'tool-calls': 'Stopped after the most tool steps allowed.',
};

interface Following {
  stream: RunningStream;
  view: AnswerView;
  unsubscribe: () => void;
}

/**
 * The conversation on screen and the composer. A generation is a server-side job: this panel
 * starts it (chat.stream), follows it (streams.follow, resumable by sequence number), and stops it
 * (streams.abort); leaving the page or the conversation does not stop it.
 */
export class ChatPanel {
  conversationId: string | null = null;
  readonly #title = el('h2', { class: 'conversation-title', id: 'conversation-title' }, 'New conversation');
  readonly #messages = el('div', { class: 'messages', id: 'messages' });
  readonly #input = el('textarea', {
    id: 'composer-input',
    name: 'message',
    rows: '3',
    placeholder: 'Ask something… (Enter sends, Shift+Enter adds a line)',
    required: true,
  });
  readonly #mode = el(
    'select',
    { id: 'mode-select', name: 'mode' },
    el('option', { value: 'chat' }, 'Chat (no tools)'),
    el('option', { value: 'assistant', selected: true }, 'Assistant (read files)'),
    el('option', { value: 'agent' }, 'Agent (write, run commands)'),
  );
  readonly #send = el('button', { type: 'submit', class: 'primary' }, 'Send');
  readonly #stop = el('button', { type: 'button', class: 'danger', hidden: true }, 'Stop');
  readonly #status = el('p', { class: 'composer-status', role: 'status' });
  #following: Following | null = null;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly onConversationChanged: () => void,
  ) {
    const form = el(
      'form',
      { class: 'composer', 'aria-label': 'Send a message' },
      el('label', { for: 'composer-input', class: 'sr-only' }, 'Message'),
      this.#input,
      el(
        'div',
        { class: 'composer-row' },
        el('label', { for: 'mode-select' }, 'Mode '),
        this.#mode,
        this.#status,
        this.#stop,
        this.#send,
      ),
    );
    root.append(el('div', { class: 'chat-header' }, this.#title), this.#messages, form);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send();
    });
    this.#input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    this.#stop.addEventListener('click', () => void this.stop());
  }

  /** First paint: a stream this tab was following before a reload, else the current conversation. */
  async start(): Promise<void> {
    const running = loadRunningStream();
    if (running) {
      try {
        await this.#resume(running);
        return;
      } catch (error) {
        console.warn('could not resume the running answer', error);
        clearRunningStream();
      }
    }
    const current = await this.client.conversations.current.query({});
    this.#show(current.conversation.id, current.conversation.title, current.messages);
  }

  /** Shows a saved conversation and makes it the current one. */
  async open(conversationId: string): Promise<void> {
    // The answer being followed goes on and is stored; a reload should show this conversation now.
    this.#stopFollowing();
    clearRunningStream();
    const loaded = await this.client.conversations.load.mutate({ conversationId });
    this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
    this.#input.focus();
  }

  async newConversation(): Promise<void> {
    this.#stopFollowing();
    clearRunningStream();
    const { conversationId } = await this.client.context.clear.mutate({});
    this.#show(conversationId, '', []);
    this.#input.focus();
  }

  /** The list renamed or deleted a conversation: keep the header (or the screen) in step. */
  conversationRenamed(id: string, title: string): void {
    if (id === this.conversationId) this.#title.textContent = title || 'New conversation';
  }

  async conversationDeleted(id: string): Promise<void> {
    if (id === this.conversationId) await this.newConversation();
  }

  async send(): Promise<void> {
    const message = this.#input.value.trim();
    if (!message || this.#following) return;
    const mode = this.#mode.value as Mode;
    this.#setBusy(true);
    this.#status.textContent = '';
    try {
      this.conversationId ??= (await this.client.conversations.current.query({})).conversation.id;
      const conversationId = this.conversationId;
      this.#messages.append(userMessageElement(message));
      this.#input.value = '';
      const { streamId } = await this.client.chat.stream.mutate({ message, mode, conversation_id: conversationId });
      const stream: RunningStream = { streamId, conversationId, lastSeq: 0, parts: [] };
      saveRunningStream(stream);
      announce('The assistant is answering.');
      this.#follow(stream, this.#appendAnswer(stream));
    } catch (error) {
      this.#setBusy(false);
      this.#status.textContent = `Not sent: ${errorText(error)}`;
    }
  }

  async stop(): Promise<void> {
    const following = this.#following;
    if (!following) return;
    this.#stop.disabled = true;
    try {
      await this.client.streams.abort.mutate({ streamId: following.stream.streamId });
    } catch (error) {
      this.#status.textContent = `Could not stop: ${errorText(error)}`;
      this.#stop.disabled = false;
    }
  }

  async #resume(running: RunningStream): Promise<void> {
    const loaded = await this.client.conversations.get.query({ id: running.conversationId });
    // The stored answer of this exchange may be partial; the parts kept with the stream stand for it.
    const messages = [...loaded.messages];
    while (messages.at(-1)?.role === 'assistant') messages.pop();
    this.#show(loaded.conversation.id, loaded.conversation.title, messages);
    this.#setBusy(true);
    this.#follow(running, this.#appendAnswer(running));
  }

  #appendAnswer(stream: RunningStream): AnswerView {
    const view = new AnswerView(stream.parts, true);
    view.element.classList.add('streaming');
    this.#messages.append(view.element);
    this.#scrollToEnd();
    return view;
  }

  #follow(stream: RunningStream, view: AnswerView): void {
    const subscription = this.client.streams.follow.subscribe(
      { streamId: stream.streamId, lastEventId: stream.lastSeq > 0 ? String(stream.lastSeq) : null },
      {
        onData: ({ id, data }) => {
          this.#onEvent(stream, view, Number(id), data);
        },
        onError: (error) => {
          // Leaving the page closes the connection; the stream must stay stored for the next page.
          if (unloading) return;
          this.#stopFollowing();
          if (appCodeOf(error) === 'NOT_FOUND') {
            // Past its retention: the stored conversation holds the whole answer instead.
            clearRunningStream();
            view.finish('This answer can no longer be followed.');
            void this.client.conversations.get
              .query({ id: stream.conversationId })
              .then((loaded) => {
                if (this.conversationId === loaded.conversation.id) this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
              })
              .catch(() => undefined);
            return;
          }
          // The generation goes on without us; Resume follows it again after the last event shown.
          view.interrupted(`Connection lost: ${errorText(error)}`, () => {
            this.#setBusy(true);
            this.#follow(stream, view);
          });
        },
      },
    );
    this.#following = {
      stream,
      view,
      unsubscribe: () => {
        subscription.unsubscribe();
      },
    };
  }

  #onEvent(stream: RunningStream, view: AnswerView, seq: number, event: ChatEvent): void {
    view.changed(applyEvent(stream.parts, event));
    stream.lastSeq = seq;
    if (event.type === 'context_update') {
      this.#title.textContent = event.context.title || 'New conversation';
    }
    if (event.type === 'done') {
      const { finishReason, provider, model } = event.metadata;
      this.#stopFollowing();
      clearRunningStream();
      view.finish(endNotes[finishReason] ?? `${provider}/${model}`);
      this.#setBusy(false);
      announce(finishReason === 'stop' ? 'The answer is complete.' : (endNotes[finishReason] ?? 'The answer ended.'));
      this.onConversationChanged();
    } else {
      saveRunningStream(stream);
    }
    this.#scrollToEnd();
  }

  #stopFollowing(): void {
    this.#following?.unsubscribe();
    this.#following = null;
    this.#setBusy(false);
  }

  #show(conversationId: string, title: string, messages: StoredMessage[]): void {
    this.conversationId = conversationId;
    this.#title.textContent = title || 'New conversation';
    this.#messages.replaceChildren(
      ...messages
        .filter((message) => message.role === 'user' || message.role === 'assistant')
        .map((message) =>
          message.role === 'user' ? userMessageElement(message.content) : new AnswerView(partsOfStoredAnswer(message.content, message.toolCalls), false).element,
        ),
    );
    if (messages.length === 0) this.#messages.append(el('p', { class: 'empty-hint' }, 'No messages yet. Ask away.'));
    this.#scrollToEnd();
  }

  #setBusy(busy: boolean): void {
    this.#send.disabled = busy;
    this.#stop.hidden = !busy;
    this.#stop.disabled = false;
    this.#messages.querySelector('.empty-hint')?.remove();
  }

  #scrollToEnd(): void {
    this.#messages.scrollTop = this.#messages.scrollHeight;
  }
}
