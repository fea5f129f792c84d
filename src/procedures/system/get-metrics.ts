import { z } from 'zod';
import { requirePermission } from '../guards.js';
import { noInput } from '../schemas/common.js';

/**
 * `GET /metrics`' content (CONTRACT §5: system:info, rate group general). A procedure, so the
 * plain Express route that serves it as Prometheus text passes the same chain as every other
 * operation: rate limit, token, permission with its audited 403.
 */
export const getMetricsProcedure = requirePermission('system:info')
  .input(noInput)
  .output(z.object({ contentType: z.string(), text: z.string() }))
  .query(async ({ ctx }) => {
    const { registry } = ctx.metrics;
    return { contentType: registry.contentType, text: await registry.metrics() };
  });
