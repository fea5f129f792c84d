import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import { appCodeOf, type ApiClient } from './api-client.js';
import { applyEvent, heldToolPart, partsOfStoredAnswer } from './answer-parts.js';
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
type StoredMessage = { role: string; content: string; toolCalls?: unknown[] | undefined; provider?: string | undefined; model?: string | undefined };

/** The model picker as the panel sees it: what to send with a message, told which conversation is shown. */
export interface ConversationModel {
  /** `<provider>/<name>` for the conversation on screen, or undefined for the caller's active model. */
  chosen(): string | undefined;
  conversationShown(messages: readonly StoredMessage[]): void;
}

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
  /** Stop was pressed and the abort accepted: the `done` event is on its way. */
  stopping: boolean;
}

/**
 * The conversation on screen and the composer. A generation is a server-side job: this panel
 * starts it (chat.stream), follows it (streams.follow, resumable by sequence number), and stops it
 * (streams.abort); leaving the page or the conversation does not stop it. Streams of conversations
 * not on screen are still followed, so going back to one shows its answer still coming.
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
  /**
   * The answers still running, by conversation id (at most one generation runs per conversation):
   * followed, or waiting for Resume after the connection was lost.
   */
  readonly #running = new Map<string, Following>();
  readonly #holds = new Map<string, { commandId: string; toolCallId?: string | undefined; command: string }>();
  /** A message is on its way to chat.stream: a second one must wait, or two streams would start. */
  #sending = false;
  /**
   * Bumped by every navigation (start, open, new): a load that finishes after a later navigation
   * began is stale and must not replace what the later one shows.
   */
  #generation = 0;
  #saveTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly onConversationChanged: () => void,
    private readonly model?: ConversationModel,
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
        if (!this.#send.disabled) form.requestSubmit();
      }
    });
    this.#stop.addEventListener('click', () => void this.stop());
    // Saving is throttled (#saveSoon); the page going away writes the latest state at once.
    addEventListener('pagehide', () => {
      this.#saveShown();
    });
  }

  /** First paint: a stream this tab was following before a reload, else the current conversation. */
  async start(): Promise<void> {
    const generation = ++this.#generation;
    const running = loadRunningStream();
    if (running) {
      try {
        await this.#resume(running, generation);
        return;
      } catch (error) {
        console.warn('could not resume the running answer', error);
        this.#stopFollowing(this.#running.get(running.conversationId));
        clearRunningStream();
      }
    }
    const current = await this.client.conversations.current.query({});
    if (generation === this.#generation) this.#show(current.conversation.id, current.conversation.title, current.messages);
  }

  /** Shows a saved conversation and makes it the current one. */
  async open(conversationId: string): Promise<void> {
    // The answer being followed goes on (and is followed) in the background.
    const generation = ++this.#generation;
    const loaded = await this.client.conversations.load.mutate({ conversationId });
    if (generation !== this.#generation) return;
    this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
    this.#input.focus();
  }

  async newConversation(): Promise<void> {
    const generation = ++this.#generation;
    const { conversationId } = await this.client.context.clear.mutate({});
    if (generation !== this.#generation) return;
    this.#show(conversationId, '', []);
    this.#input.focus();
  }

  /** The list renamed or deleted a conversation: keep the header (or the screen) in step. */
  conversationRenamed(id: string, title: string): void {
    if (id === this.conversationId) this.#title.textContent = title || 'New conversation';
  }

  async conversationDeleted(id: string): Promise<void> {
    this.#stopFollowing(this.#running.get(id));
    if (id === this.conversationId) await this.newConversation();
  }

  async send(): Promise<void> {
    const message = this.#input.value.trim();
    if (!message || this.#sending || this.#shownRunning()) return;
    const mode = this.#mode.value as Mode;
    const generation = this.#generation;
    this.#sending = true;
    this.#updateBusy();
    this.#status.textContent = '';
    let sent: HTMLElement | null = null;
    try {
      this.conversationId ??= (await this.client.conversations.current.query({})).conversation.id;
      if (generation !== this.#generation) return;
      const conversationId = this.conversationId;
      sent = userMessageElement(message);
      this.#messages.querySelector('.empty-hint')?.remove();
      this.#messages.append(sent);
      this.#input.value = '';
      // The model goes with the message (CONTRACT §12): choosing one here changes nobody's active model.
      const model = this.model?.chosen();
      const { streamId } = await this.client.chat.stream.mutate({ message, mode, conversation_id: conversationId, ...(model ? { model } : {}) });
      const stream: RunningStream = { streamId, conversationId, lastSeq: 0, parts: [] };
      const view = this.#answerView(stream);
      this.#follow(stream, view);
      // The user may have opened another conversation meanwhile: the answer then waits off screen.
      if (this.conversationId === conversationId) {
        this.#messages.append(view.element);
        this.#scrollToEnd();
        saveRunningStream(stream);
        announce('The assistant is answering.');
      }
    } catch (error) {
      sent?.remove();
      // Not sent: the text comes back unless something new was typed meanwhile.
      if (this.#input.value === '') this.#input.value = message;
      this.#status.textContent = `Not sent: ${errorText(error)}`;
    } finally {
      this.#sending = false;
      this.#updateBusy();
    }
  }

  async stop(): Promise<void> {
    const following = this.#shownRunning();
    if (!following || following.stopping) return;
    following.stopping = true;
    this.#updateBusy();
    try {
      await this.client.streams.abort.mutate({ streamId: following.stream.streamId });
    } catch (error) {
      this.#status.textContent = `Could not stop: ${errorText(error)}`;
      following.stopping = false;
      this.#updateBusy();
    }
  }

  async #resume(running: RunningStream, generation: number): Promise<void> {
    const loaded = await this.client.conversations.get.query({ id: running.conversationId });
    if (generation !== this.#generation) return;
    this.#follow(running, this.#answerView(running));
    // #show puts the followed answer in place of the stored (possibly partial) one.
    this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
  }

  #answerView(stream: RunningStream): AnswerView {
    const view = new AnswerView(stream.parts, true);
    view.element.classList.add('streaming');
    return view;
  }

  #follow(stream: RunningStream, view: AnswerView): void {
    const subscription = this.client.streams.follow.subscribe(
      { streamId: stream.streamId, lastEventId: stream.lastSeq > 0 ? String(stream.lastSeq) : null },
      {
        onData: ({ id, data }) => {
          this.#onEvent(following, Number(id), data);
        },
        onError: (error) => {
          // Leaving the page closes the connection; the stream must stay stored for the next page.
          if (unloading) return;
          following.unsubscribe();
          if (appCodeOf(error) === 'NOT_FOUND') {
            // Past its retention: the stored conversation holds the whole answer instead.
            this.#stopFollowing(following);
            if (this.conversationId === stream.conversationId) clearRunningStream();
            view.finish('This answer can no longer be followed.');
            void this.client.conversations.get
              .query({ id: stream.conversationId })
              .then((loaded) => {
                if (this.conversationId === loaded.conversation.id) this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
              })
              .catch(() => undefined);
            return;
          }
          // The generation goes on without us, so it stays the conversation's running answer (and
          // stored for a reload, which an error during the page's own unloading may precede);
          // Resume follows it again after the last event shown.
          view.interrupted(`Connection lost: ${errorText(error)}`, () => {
            if (this.#running.get(stream.conversationId) === following) this.#follow(stream, view);
          });
        },
      },
    );
    const following: Following = {
      stream,
      view,
      stopping: false,
      unsubscribe: () => {
        subscription.unsubscribe();
      },
    };
    this.#running.set(stream.conversationId, following);
    this.#updateBusy();
  }

  #onEvent(following: Following, seq: number, event: ChatEvent): void {
    const { stream, view } = following;
    const shown = this.conversationId === stream.conversationId;
    view.changed(applyEvent(stream.parts, event));
    if (event.type === 'tool_call') this.#markWaiting(following);
    stream.lastSeq = seq;
    if (event.type === 'context_update' && shown) {
      this.#title.textContent = event.context.title || 'New conversation';
    }
    if (event.type === 'done') {
      const { finishReason, provider, model } = event.metadata;
      this.#stopFollowing(following);
      view.finish(endNotes[finishReason] ?? `${provider}/${model}`);
      if (shown) {
        this.#saveShown();
        announce(finishReason === 'stop' ? 'The answer is complete.' : (endNotes[finishReason] ?? 'The answer ended.'));
      }
      this.onConversationChanged();
    } else if (shown) {
      this.#saveSoon();
    }
    if (shown) this.#scrollToEnd();
  }

  /** Ends this one subscription (a later stream of the same conversation is left alone). */
  #stopFollowing(following: Following | undefined): void {
    if (!following) return;
    following.unsubscribe();
    if (this.#running.get(following.stream.conversationId) === following) this.#running.delete(following.stream.conversationId);
    this.#updateBusy();
  }

  /**
   * A command held for confirmation (CONTRACT §12): an answer paused on it shows its tool call as
   * waiting. The hold may be heard before the tool call (a reload: the pending list and the
   * stream's replay race), so holds are remembered until decided.
   */
  commandHeld(held: { commandId: string; toolCallId?: string | undefined; command: string }): void {
    this.#holds.set(held.commandId, held);
    for (const following of this.#running.values()) this.#markWaiting(following);
  }

  commandDecided(commandId: string): void {
    this.#holds.delete(commandId);
  }

  #markWaiting(following: Following): void {
    for (const held of this.#holds.values()) {
      const index = heldToolPart(following.stream.parts, held);
      const part = following.stream.parts[index];
      if (part?.kind !== 'tool' || part.waiting) continue;
      part.waiting = true;
      following.view.changed(index);
    }
  }

  #shownRunning(): Following | undefined {
    return this.conversationId === null ? undefined : this.#running.get(this.conversationId);
  }

  /**
   * Keeps sessionStorage in step with the screen for a reload: the answer still coming in the
   * conversation shown, or nothing. Writing the whole answer on every chunk would cost time
   * quadratic in its length, so changes are written at most every 250 ms.
   */
  #saveSoon(): void {
    this.#saveTimer ??= setTimeout(() => {
      this.#saveShown();
    }, 250);
  }

  #saveShown(): void {
    clearTimeout(this.#saveTimer);
    this.#saveTimer = undefined;
    const following = this.#shownRunning();
    if (following) saveRunningStream(following.stream);
    else clearRunningStream();
  }

  #show(conversationId: string, title: string, messages: StoredMessage[]): void {
    this.conversationId = conversationId;
    this.#title.textContent = title || 'New conversation';
    this.model?.conversationShown(messages);
    this.#status.textContent = '';
    const running = this.#running.get(conversationId);
    const shown = messages.filter((message) => message.role === 'user' || message.role === 'assistant');
    // The stored answer of a running exchange is partial; the followed answer stands for it.
    if (running) while (shown.at(-1)?.role === 'assistant') shown.pop();
    this.#messages.replaceChildren(
      ...shown.map((message) =>
        message.role === 'user' ? userMessageElement(message.content) : new AnswerView(partsOfStoredAnswer(message.content, message.toolCalls), false).element,
      ),
    );
    if (running) this.#messages.append(running.view.element);
    else if (shown.length === 0) this.#messages.append(el('p', { class: 'empty-hint' }, 'No messages yet. Ask away.'));
    this.#saveShown();
    this.#updateBusy();
    this.#scrollToEnd();
  }

  /** Send waits while a message is being sent or this conversation's answer is still coming. */
  #updateBusy(): void {
    const running = this.#shownRunning();
    this.#send.disabled = this.#sending || running !== undefined;
    this.#stop.hidden = running === undefined;
    this.#stop.disabled = running?.stopping === true;
  }

  #scrollToEnd(): void {
    this.#messages.scrollTop = this.#messages.scrollHeight;
  }
}
