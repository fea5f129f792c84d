import type { TRPCClient } from '@trpc/client';
import type { ChatEvent } from '../../src/core/chat/chat-events.js';
import type { AppRouter } from '../../src/index.js';

/** Follows a chat stream over the `streams.follow` subscription until `done`: its events and their tracked ids. */
export function followStream(client: TRPCClient<AppRouter>, streamId: string, lastEventId?: string) {
  return new Promise<{ ids: string[]; events: ChatEvent[] }>((resolve, reject) => {
    const ids: string[] = [];
    const events: ChatEvent[] = [];
    const subscription = client.streams.follow.subscribe(
      { streamId, ...(lastEventId ? { lastEventId } : {}) },
      {
        onData: ({ id, data }) => {
          ids.push(id);
          events.push(data);
          if (data.type === 'done') {
            subscription.unsubscribe();
            resolve({ ids, events });
          }
        },
        onError: (error) => {
          subscription.unsubscribe();
          reject(error);
        },
      },
    );
  });
}
