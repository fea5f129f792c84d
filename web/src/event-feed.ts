import type { ApiClient } from './api-client.js';
import { el } from './dom.js';

/** One push of the user's feed (CONTRACT §8 `context_update` kinds). */
export type FeedEvent = { kind: 'pending_command' | 'command_done' | 'model_download' | 'conversation' } & Record<string, unknown>;

type Listener = (event: FeedEvent) => void;

const maximumBackoffMs = 30_000;

/**
 * The caller's event feed (held commands, finished commands, model downloads, conversation
 * changes) from one `events.follow` subscription, handed to whichever panels listen for a kind.
 * tRPC's link resumes it after the last event it had when the connection drops; an error the link
 * gives up on is followed by a new subscription after a growing pause, since held commands reach
 * the confirmation dialog only this way. `element` says, quietly, when the feed is not live.
 */
export class EventFeed {
  readonly element = el('span', { class: 'feed-state', id: 'feed-state', role: 'status', hidden: true });
  readonly #listeners = new Map<FeedEvent['kind'], Set<Listener>>();
  readonly #restarted = new Set<() => void>();
  #failures = 0;

  constructor(private readonly client: ApiClient) {
    this.#subscribe();
  }

  on(kind: FeedEvent['kind'], listener: Listener): void {
    let listeners = this.#listeners.get(kind);
    if (!listeners) this.#listeners.set(kind, (listeners = new Set()));
    listeners.add(listener);
  }

  /** Called when a new subscription starts after one failed (what it would have said is missed). */
  onRestart(listener: () => void): void {
    this.#restarted.add(listener);
  }

  #subscribe(): void {
    const subscription = this.client.events.follow.subscribe(
      {},
      {
        onStarted: () => {
          // Events pushed while there was no subscription are lost: listeners reload what they show.
          if (this.#failures > 0) for (const listener of this.#restarted) listener();
          this.#failures = 0;
          this.#setState(null);
        },
        onData: ({ data }) => {
          for (const listener of this.#listeners.get(data.kind) ?? []) listener(data);
        },
        onConnectionStateChange: (state) => {
          if (state.state === 'connecting' && state.error) this.#setState('Live updates interrupted, reconnecting…');
          if (state.state === 'pending') this.#setState(null);
        },
        onError: (error) => {
          subscription.unsubscribe();
          this.#failures += 1;
          const backoff = Math.min(maximumBackoffMs, 1_000 * 2 ** (this.#failures - 1));
          console.warn(`event feed stopped, subscribing again in ${backoff / 1000}s`, error);
          this.#setState('Live updates stopped, reconnecting…');
          setTimeout(() => {
            this.#subscribe();
          }, backoff);
        },
      },
    );
  }

  #setState(text: string | null): void {
    this.element.hidden = text === null;
    this.element.textContent = text ?? '';
  }
}
