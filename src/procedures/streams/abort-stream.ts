import { atHome, streamHome } from '../at-home.js';
import { requirePermission, requirePermissionFor } from '../guards.js';
import { abortStreamInput, abortStreamMeta, abortStreamOutput } from './abort-stream.types.js';

export const abortStreamProcedure = requirePermission('chat:send', { rateGroup: 'chat' })
  .meta(abortStreamMeta)
  .input(abortStreamInput)
  .output(abortStreamOutput)
  .mutation(
    atHome(streamHome(), async ({ ctx, input }) => {
      const job = ctx.streams.require(ctx.user.id, input.streamId);
      await requirePermissionFor(ctx, `providers:${job.provider}`);
      // Aborting a finished stream (still within STREAM_RETENTION_MS) is a harmless success.
      job.abort('client');
      return { success: true };
    }),
  );
