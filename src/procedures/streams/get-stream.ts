import { requirePermission, requirePermissionFor } from '../guards.js';
import { getStreamInput, getStreamMeta, getStreamOutput } from './get-stream.types.js';

export const getStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(getStreamMeta)
  .input(getStreamInput)
  .output(getStreamOutput)
  .query(async ({ ctx, input }) => {
    const job = await ctx.streams.locate(ctx.user.id, input.streamId);
    await requirePermissionFor(ctx, `providers:${job.provider}`);
    // Asked for what follows its `done`: 204, so an EventSource stops reconnecting (CONTRACT §12).
    const doneSeq = await job.doneSeq();
    if (doneSeq !== null && input.after >= doneSeq) ctx.response.status = 204;
    return { streamId: job.id, after: input.after };
  });
