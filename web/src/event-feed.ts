import type { ApiClient } from './api-client.js';

/** One push of the user's feed (CONTRACT §8 `context_update` kinds). */
export type FeedEvent = { kind: 'pending_command' | 'command_done' | 'model_download' | 'conversation' } & Record<string, unknown>;

type Listener = (event: FeedEvent) => void;

/**
 * The caller's event feed (held commands, finished commands, model downloads, conversation
 * changes) from one `events.follow` subscription, handed to whichever panels listen for a kind.
 * tRPC's link resumes it after the last event it had when the connection drops.
 */
export class EventFeed {
  readonly #listeners = new Map<FeedEvent['kind'], Set<Listener>>();

  constructor(client: ApiClient) {
    client.events.follow.subscribe(
      {},
      {
        onData: ({ data }) => {
          for (const listener of this.#listeners.get(data.kind) ?? []) listener(data);
        },
        onError: (error) => {
          console.warn('event feed stopped', error);
        },
      },
    );
  }

  on(kind: FeedEvent['kind'], listener: Listener): void {
    let listeners = this.#listeners.get(kind);
    if (!listeners) this.#listeners.set(kind, (listeners = new Set()));
    listeners.add(listener);
  }
}
