import { getMeProcedure } from '../procedures/system/get-me.js';
import { getMetricsProcedure } from '../procedures/system/get-metrics.js';
import { getStatusProcedure } from '../procedures/system/get-status.js';
import { router } from '../procedures/trpc.js';

export const systemRouter = router({
  status: getStatusProcedure,
  me: getMeProcedure,
  metrics: getMetricsProcedure,
});
