import { tracked } from '@trpc/server';
import type { StampedEvent } from '../../core/events/user-events.js';
import { requireAuthenticated } from '../guards.js';
import { followEventsInput, followEventsMeta } from './follow-events.types.js';

/**
 * The caller's live feed as a tRPC subscription: what /ws pushes as `context_update` frames (held
 * and finished commands, model downloads, conversation changes), each `tracked()` with its id. A
 * client that reconnects within a few minutes first gets what it missed, from any instance.
 */
export const followEventsProcedure = requireAuthenticated()
  .meta(followEventsMeta)
  .input(followEventsInput)
  .subscription(async function* ({ ctx, input, signal }) {
    const queue: StampedEvent[] = [];
    let wake: (() => void) | null = null;
    // Listening starts before the catch-up is read, so nothing falls between the two.
    const unsubscribe = ctx.events.subscribe(ctx.user.id, (event, id) => {
      queue.push({ id, event });
      wake?.();
    });
    const stopped = new Promise<void>((resolve) => {
      if (signal?.aborted) resolve();
      signal?.addEventListener('abort', () => {
        resolve();
      });
    });
    try {
      const last = input.lastEventId ?? '';
      if (last) queue.unshift(...ctx.events.eventsSince(ctx.user.id, last));
      // Ids from different instances need not arrive in order (clock skew), so what was sent is
      // remembered rather than compared; the catch-up and the live queue may both hold an event.
      const sent = new Set<string>();
      while (!signal?.aborted) {
        const next = queue.shift();
        if (!next) {
          await Promise.race([new Promise<void>((resolve) => (wake = resolve)), stopped]);
          wake = null;
          continue;
        }
        if (sent.has(next.id)) continue;
        sent.add(next.id);
        if (sent.size > 1000) sent.delete(sent.values().next().value as string);
        yield tracked(next.id, next.event);
      }
    } finally {
      unsubscribe();
    }
  });
