import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import type { ApiClient } from './api-client.js';
import { partsOfStoredAnswer } from './answer-parts.js';
import { AnswerView, userMessageElement } from './answer-view.js';
import type { Caller, CallerAware } from './caller.js';
import { announce, el, errorText } from './dom.js';
import { MessageActions } from './message-actions.js';
import { plainTitle } from './plain-title.js';
import { clearRunningStream, loadRunningStream, saveRunningStream, type RunningStream } from './running-stream.js';
import { SendRetry, type Ask } from './send-retry.js';
import { shownMessages, type StoredMessage } from './shown-messages.js';
import { endAnnouncement, StreamFollower, type Following, type HeldCommand } from './stream-follower.js';

type Mode = 'chat' | 'assistant' | 'agent';

/** The model picker as the panel sees it: what to send with a message, told which conversation is shown. */
export interface ConversationModel {
  /** `<provider>/<name>` for the conversation on screen, or undefined for the caller's active model. */
  chosen(): string | undefined;
  conversationShown(messages: readonly StoredMessage[]): void;
}

/**
 * The conversation on screen and the composer. A generation is a server-side job: this panel
 * starts it (chat.stream), follows it (StreamFollower), and stops it (streams.abort); leaving the
 * page or the conversation does not stop it. Retry after a failure (SendRetry) and the buttons on
 * the messages (MessageActions) ask for answers through this panel.
 */
export class ChatPanel implements CallerAware {
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
  // Agent mode needs terminal:execute (CONTRACT §5): offered once the caller is known to hold it.
  readonly #agentMode = el('option', { value: 'agent', disabled: true }, 'Agent (write, run commands)');
  readonly #mode = el(
    'select',
    { id: 'mode-select', name: 'mode' },
    el('option', { value: 'chat' }, 'Chat (no tools)'),
    el('option', { value: 'assistant', selected: true }, 'Assistant (read files)'),
    this.#agentMode,
  );
  readonly #send = el('button', { type: 'submit', class: 'primary' }, 'Send');
  readonly #stop = el('button', { type: 'button', class: 'danger', hidden: true, title: 'Stop the answer (Esc)' }, 'Stop');
  readonly #status = el('p', { class: 'composer-status', id: 'composer-status', role: 'status' });
  readonly #retry: SendRetry;
  readonly #actions: MessageActions;
  readonly #follower: StreamFollower;
  /** A message is on its way to chat.stream: a second one must wait, or two streams would start. */
  #sending = false;
  /**
   * Bumped by every navigation (start, open, new): a load that finishes after a later navigation
   * began is stale and must not replace what the later one shows.
   */
  #generation = 0;
  #saveTimer: ReturnType<typeof setTimeout> | undefined;
  /** A quota refused a message (the remaining budget on screen is out of date). */
  onQuotaRefused: () => void = () => undefined;

  constructor(
    root: HTMLElement,
    private readonly client: ApiClient,
    private readonly onConversationChanged: () => void,
    private readonly model?: ConversationModel,
  ) {
    const busy = () => this.#sending || this.#shownRunning() !== undefined;
    const reload = (conversationId: string) => this.#reload(conversationId);
    const ask = (request: Ask) => this.#ask(request);
    this.#retry = new SendRetry(client, this.#status, {
      shownConversation: () => this.conversationId,
      busy,
      reload,
      ask,
      giveBack: (message) => {
        if (this.#input.value === '') this.#input.value = message;
      },
      showNotice: (notice) => {
        this.#messages.append(notice);
        // After the composer's buttons have settled (the request's end redraws them).
        requestAnimationFrame(() => {
          this.#scrollToEnd();
        });
        this.onQuotaRefused();
      },
    });
    this.#actions = new MessageActions(this.#messages, client, {
      busy,
      reload,
      ask,
      editingChanged: () => {
        this.#updateBusy();
      },
      focusComposer: () => {
        this.#input.focus();
      },
    });
    this.#follower = new StreamFollower(client, {
      event: (stream, event) => {
        this.#streamEvent(stream, event);
      },
      gone: (stream) => {
        this.#streamGone(stream);
      },
      changed: () => {
        this.#updateBusy();
      },
    });

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
        el('div', { class: 'composer-actions' }, this.#retry.button, this.#stop, this.#send),
      ),
    );
    root.append(el('div', { class: 'chat-header', id: 'chat-header' }, this.#title), this.#messages, form);
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
    // Esc stops the answer coming, from the composer or anywhere on the page but a dialog, the
    // terminal or a field with an Esc of its own (the drawer, a rename, an edit say so by
    // preventing the default).
    document.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.defaultPrevented || event.isComposing) return;
      if (document.querySelector('dialog[open]')) return;
      const target = event.target;
      const onPage = target === document.body || target === document.documentElement || (target instanceof Element && root.contains(target));
      if (!onPage || !this.#shownRunning()) return;
      event.preventDefault();
      void this.stop();
    });
    // Saving is throttled (#saveSoon); the page going away writes the latest state at once.
    addEventListener('pagehide', () => {
      this.#saveShown();
    });
  }

  /** Agent mode is offered to callers who may run commands; one who no longer may goes back to Assistant. */
  showFor(caller: Caller): void {
    const may = caller.may('terminal:execute');
    this.#agentMode.disabled = !may;
    if (may) this.#agentMode.removeAttribute('title');
    else this.#agentMode.title = 'Your role cannot run commands';
    if (!may && this.#mode.value === 'agent') this.#mode.value = 'assistant';
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
        this.#follower.stop(this.#follower.of(running.conversationId));
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
    if (id === this.conversationId) this.#setTitle(title);
  }

  async conversationDeleted(id: string): Promise<void> {
    this.#follower.stop(this.#follower.of(id));
    if (id === this.conversationId) await this.newConversation();
  }

  async send(): Promise<void> {
    const message = this.#input.value.trim();
    if (!message || this.#sending || this.#shownRunning()) return;
    await this.#ask({ kind: 'send', message });
  }

  /** Answers the conversation's last question again; the answer it had stays stored, superseded. */
  async regenerate(): Promise<void> {
    await this.#actions.regenerate();
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

  /** A command held for confirmation: an answer paused on it shows its tool call as waiting. */
  commandHeld(held: HeldCommand): void {
    this.#follower.commandHeld(held);
  }

  commandDecided(commandId: string): void {
    this.#follower.commandDecided(commandId);
  }

  /**
   * Starts an answer (CONTRACT §12 for `regenerate` and `replyTo`) and follows it. What it
   * replaces leaves the screen only once the server has taken the request; a failure puts the
   * stored state back on screen and offers Retry.
   */
  async #ask(ask: Ask): Promise<void> {
    const mode = this.#mode.value as Mode;
    const generation = this.#generation;
    this.#sending = true;
    this.#retry.clear();
    this.#updateBusy();
    let sent: HTMLElement | null = null;
    // Answers (and an edited question with what followed it) replaced by this request.
    let replaced: HTMLElement[] = [];
    let conversationId = this.conversationId;
    try {
      conversationId ??= this.conversationId = (await this.client.conversations.current.query({})).conversation.id;
      if (generation !== this.#generation) return;
      const replyTo = ask.kind === 'edit' ? await this.#actions.idOf(ask.article, conversationId) : undefined;
      if (generation !== this.#generation) return;
      replaced = this.#actions.replacedBy(ask);
      for (const element of replaced) element.hidden = true;
      if (ask.kind !== 'regenerate') {
        sent = userMessageElement(ask.message);
        this.#messages.querySelector('.empty-hint')?.remove();
        this.#messages.append(sent);
        if (this.#input.value.trim() === ask.message) this.#input.value = '';
      }
      // The model goes with the message (CONTRACT §12): choosing one here changes nobody's active model.
      const model = this.model?.chosen();
      // Regenerate names no message: the stored question is what is answered (CONTRACT §12).
      const turn = ask.kind === 'regenerate' ? { regenerate: true } : { message: ask.message, ...(replyTo !== undefined ? { replyTo } : {}) };
      const { streamId } = await this.client.chat.stream.mutate({ ...turn, mode, conversation_id: conversationId, ...(model ? { model } : {}) });
      for (const element of replaced) element.remove();
      const stream: RunningStream = { streamId, conversationId, lastSeq: 0, parts: [] };
      const { view } = this.#follower.follow(stream);
      // The user may have opened another conversation meanwhile: the answer then waits off screen.
      if (this.conversationId === conversationId) {
        this.#messages.append(view.element);
        this.#scrollToEnd();
        saveRunningStream(stream);
        announce('The assistant is answering.');
      }
    } catch (error) {
      await this.#retry.failed({ ask, error, conversationId, sent, replaced, stale: () => generation !== this.#generation });
    } finally {
      this.#sending = false;
      this.#updateBusy();
    }
  }

  /** Shows the conversation as stored. */
  async #reload(conversationId: string): Promise<void> {
    const generation = this.#generation;
    const loaded = await this.client.conversations.get.query({ id: conversationId });
    if (generation === this.#generation && this.conversationId === conversationId) this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
  }

  async #resume(running: RunningStream, generation: number): Promise<void> {
    const loaded = await this.client.conversations.get.query({ id: running.conversationId });
    if (generation !== this.#generation) return;
    this.#follower.follow(running);
    // #show puts the followed answer in place of the stored (possibly partial) one.
    this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
  }

  /** An event of a followed answer: the rest of the page keeps in step if its conversation is shown. */
  #streamEvent(stream: RunningStream, event: ChatEvent): void {
    const shown = this.conversationId === stream.conversationId;
    if (event.type === 'context_update' && shown) {
      this.#setTitle(event.context.title);
    }
    if (event.type === 'done') {
      this.#updateBusy();
      if (shown) {
        this.#saveShown();
        announce(endAnnouncement(event.metadata.finishReason));
      }
      this.onConversationChanged();
    } else if (shown) {
      this.#saveSoon();
    }
    if (shown) this.#scrollToEnd();
  }

  /** An answer past its retention: the stored conversation holds all of it. */
  #streamGone(stream: RunningStream): void {
    if (this.conversationId === stream.conversationId) clearRunningStream();
    void this.client.conversations.get
      .query({ id: stream.conversationId })
      .then((loaded) => {
        if (this.conversationId === loaded.conversation.id) this.#show(loaded.conversation.id, loaded.conversation.title, loaded.messages);
      })
      .catch(() => undefined);
  }

  #shownRunning(): Following | undefined {
    return this.#follower.of(this.conversationId);
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
    this.#actions.forgetEdit();
    this.#setTitle(title);
    const shown = shownMessages(messages);
    this.model?.conversationShown(shown);
    this.#retry.clear();
    const running = this.#follower.of(conversationId);
    // The stored answer of a running exchange is partial; the followed answer stands for it.
    if (running) while (shown.at(-1)?.role === 'assistant') shown.pop();
    this.#messages.replaceChildren(
      ...shown.map((message) =>
        message.role === 'user'
          ? userMessageElement(message.content, message.id)
          : new AnswerView(partsOfStoredAnswer(message.content, message.toolCalls), false).element,
      ),
    );
    if (running) this.#messages.append(running.view.element);
    else if (shown.length === 0) this.#messages.append(el('p', { class: 'empty-hint' }, 'No messages yet. Ask away.'));
    else if (shown.at(-1)?.role === 'user') {
      // A question left without an answer (its provider failed, say): offer one, not a resend.
      this.#retry.offer('This question has no answer yet.', { kind: 'regenerate', message: shown.at(-1)?.content ?? '' }, conversationId);
    }
    this.#saveShown();
    this.#updateBusy();
    this.#scrollToEnd();
  }

  #setTitle(title: string): void {
    this.#title.textContent = plainTitle(title) || 'New conversation';
  }

  /**
   * Send waits while a message is being sent or this conversation's answer is still coming;
   * Regenerate (on the last answer) and Edit are offered only when nothing is.
   */
  #updateBusy(): void {
    const running = this.#shownRunning();
    const busy = this.#sending || running !== undefined;
    this.#send.disabled = busy;
    this.#stop.hidden = running === undefined;
    this.#stop.disabled = running?.stopping === true;
    this.#retry.button.disabled = busy;
    this.#actions.showButtons(busy);
  }

  #scrollToEnd(): void {
    this.#messages.scrollTop = this.#messages.scrollHeight;
  }
}
