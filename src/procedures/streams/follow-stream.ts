import { tracked } from '@trpc/server';
import { requirePermission, requirePermissionFor } from '../guards.js';
import { followStreamInput, followStreamMeta } from './follow-stream.types.js';

/**
 * A chat stream as a tRPC subscription: the events after `lastEventId`, then live ones until
 * `done`. Each is `tracked()` with its sequence number, so the official client resumes exactly
 * where it left off after a reconnect. Start the stream with `chat.stream` (or any chat mutation
 * that returns a streamId), then subscribe here.
 */
export const followStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(followStreamMeta)
  .input(followStreamInput)
  .subscription(async function* ({ ctx, input, signal }) {
    const job = await ctx.streams.locate(ctx.user.id, input.streamId);
    await requirePermissionFor(ctx, `providers:${job.provider}`);
    for await (const { seq, event } of job.follow(Number(input.lastEventId ?? 0), signal)) {
      yield tracked(String(seq), event);
    }
  });
