import { AppError } from '../../core/errors/app-error.js';
import { getServiceStatus } from '../../core/status/service-status.js';
import { publicProcedure } from '../guards.js';
import { noInput } from '../schemas/common.js';
import { getStatusMeta, getStatusOutput } from './get-status.types.js';

export const getStatusProcedure = publicProcedure
  .meta(getStatusMeta)
  .input(noInput)
  .output(getStatusOutput)
  .query(async ({ ctx }) => {
    const status = await getServiceStatus(ctx.store, ctx.config, ctx.startedAt, ctx.sandbox, ctx.redis, ctx.providerReachability);
    if (status.status !== 'down') return status;
    // CONTRACT §3: `down` is a 503 whose body keeps the status fields beside the error.
    ctx.response.status = 503;
    const { error } = new AppError('SERVICE_UNAVAILABLE', 'Database unreachable').toEnvelope();
    return { success: false as const, ...status, error };
  });
