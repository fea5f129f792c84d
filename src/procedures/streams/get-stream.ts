import { requirePermission, requirePermissionFor } from '../guards.js';
import { getStreamInput, getStreamMeta, getStreamOutput } from './get-stream.types.js';

export const getStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(getStreamMeta)
  .input(getStreamInput)
  .output(getStreamOutput)
  .query(async ({ ctx, input }) => {
    const job = await ctx.streams.locate(ctx.user.id, input.streamId);
    await requirePermissionFor(ctx, `providers:${job.provider}`);
    return { streamId: job.id, after: input.after };
  });
