import express, { type Request, type Response, type Router } from 'express';
import type { AppDeps } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { requirePermissionFor } from '../procedures/guards.js';
import { sendError } from './error-response.js';
import { createRequestContext } from './request-context.js';

/**
 * `GET /metrics` in Prometheus's text format (CONTRACT §5: system:info, rate group general).
 * A plain Express route, not a procedure: its body is not JSON, and trpc-to-openapi serves only
 * /api paths. Its guard is the procedures' own, in the contract's order: the general group's
 * rate limit, then the request context's authentication (401, or 503 while the identity provider
 * is unreachable), then the permission check that audits a 403 denial like any other.
 */
export function metricsEndpoint(deps: AppDeps): Router {
  const router = express.Router();
  const limiter = deps.rateLimits?.limiterFor('general');
  const handlers = limiter ? [limiter, serveMetrics] : [serveMetrics];
  router.get('/metrics', ...handlers);
  return router;

  async function serveMetrics(req: Request, res: Response): Promise<void> {
    try {
      const ctx = createRequestContext(deps, req, res);
      const user = await ctx.identify();
      await requirePermissionFor({ ...ctx, user }, 'system:info');
      const { registry } = deps.metrics;
      const body = await registry.metrics();
      res.setHeader('Content-Type', registry.contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(body);
    } catch (error) {
      sendError(res, appErrorFrom(error));
    }
  }
}
