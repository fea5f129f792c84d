import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import { appCodeOf, type ApiClient } from './api-client.js';
import { applyEvent, heldToolPart } from './answer-parts.js';
import { AnswerView } from './answer-view.js';
import { errorText } from './dom.js';
import type { RunningStream } from './running-stream.js';

// Leaving the page closes the followed connections; that is no lost connection, and the stream
// must stay stored for the next page to follow again.
let unloading = false;
addEventListener('pagehide', () => {
  unloading = true;
});
addEventListener('pageshow', () => {
  unloading = false;
});

const endNotes: Record<string, string> = {
  aborted: 'Stopped.',
  error: 'The answer ended with an error.',
  length: 'Cut off at the length limit.',
  'tool-calls': 'Stopped after the most tool steps allowed.',
};

/** What screen-reader users hear when the answer on screen ends. */
export function endAnnouncement(finishReason: string): string {
  return finishReason === 'stop' ? 'The answer is complete.' : (endNotes[finishReason] ?? 'The answer ended.');
}

export interface Following {
  stream: RunningStream;
  view: AnswerView;
  unsubscribe: () => void;
  /** Stop was pressed and the abort accepted: the `done` event is on its way. */
  stopping: boolean;
}

export interface HeldCommand {
  commandId: string;
  toolCallId?: string | undefined;
  command: string;
}

/** What the panel hears from the answers followed. */
export interface FollowerHooks {
  /** An event is shown in its answer; after `done` the answer is finished and no longer followed. */
  event(stream: RunningStream, event: ChatEvent): void;
  /** The stream is past its retention: the stored conversation holds the whole answer instead. */
  gone(stream: RunningStream): void;
  /** An answer started or stopped being followed. */
  changed(): void;
}

/**
 * The answers still running, by conversation id (at most one generation runs per conversation):
 * followed with streams.follow, resumable by sequence number, or waiting for Resume after the
 * connection was lost. Answers of conversations not on screen are followed too, so going back to
 * one shows its answer still coming.
 */
export class StreamFollower {
  readonly #running = new Map<string, Following>();
  readonly #holds = new Map<string, HeldCommand>();

  constructor(
    private readonly client: ApiClient,
    private readonly hooks: FollowerHooks,
  ) {}

  /** The answer running in a conversation, if any. */
  of(conversationId: string | null): Following | undefined {
    return conversationId === null ? undefined : this.#running.get(conversationId);
  }

  /** Follows a stream into a new answer view, from after the last event the stream holds. */
  follow(stream: RunningStream): Following {
    const view = new AnswerView(stream.parts, true);
    view.element.classList.add('streaming');
    return this.#follow(stream, view);
  }

  /** Ends this one subscription (a later stream of the same conversation is left alone). */
  stop(following: Following | undefined): void {
    if (!following) return;
    following.unsubscribe();
    if (this.#running.get(following.stream.conversationId) === following) this.#running.delete(following.stream.conversationId);
    this.hooks.changed();
  }

  /**
   * A command held for confirmation (CONTRACT §12): an answer paused on it shows its tool call as
   * waiting. The hold may be heard before the tool call (a reload: the pending list and the
   * stream's replay race), so holds are remembered until decided.
   */
  commandHeld(held: HeldCommand): void {
    this.#holds.set(held.commandId, held);
    for (const following of this.#running.values()) this.#markWaiting(following);
  }

  commandDecided(commandId: string): void {
    this.#holds.delete(commandId);
  }

  #follow(stream: RunningStream, view: AnswerView): Following {
    const subscription = this.client.streams.follow.subscribe(
      { streamId: stream.streamId, lastEventId: stream.lastSeq > 0 ? String(stream.lastSeq) : null },
      {
        onData: ({ id, data }) => {
          this.#onEvent(following, Number(id), data);
        },
        onError: (error) => {
          if (unloading) return;
          following.unsubscribe();
          if (appCodeOf(error) === 'NOT_FOUND') {
            this.stop(following);
            view.finish('This answer can no longer be followed.');
            this.hooks.gone(stream);
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
    this.hooks.changed();
    return following;
  }

  #onEvent(following: Following, seq: number, event: ChatEvent): void {
    const { stream, view } = following;
    view.changed(applyEvent(stream.parts, event));
    if (event.type === 'tool_call') this.#markWaiting(following);
    stream.lastSeq = seq;
    if (event.type === 'done') {
      const { finishReason, provider, model } = event.metadata;
      this.stop(following);
      view.finish(endNotes[finishReason] ?? `${provider}/${model}`);
    }
    this.hooks.event(stream, event);
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
}
