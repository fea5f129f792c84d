import express, { type Request, type Response, type Router } from 'express';
import type { AppDeps } from '../procedures/context.js';
import { appErrorFrom } from '../procedures/error-mapping.js';
import { createCallerFactory } from '../procedures/trpc.js';
import { appRouter } from '../routers/app-router.js';
import { sendError } from './error-response.js';
import { createRequestContext } from './request-context.js';

/**
 * `GET /metrics` in Prometheus's text format (CONTRACT §5: system:info, rate group general).
 * A plain Express route, not a procedure: its body is not JSON, and trpc-to-openapi serves only
 * /api paths. It calls the `system.metrics` procedure, whose chain is every operation's: the
 * general group's rate limit, then authentication (401, or 503 while the identity provider is
 * unreachable), then the permission check that audits a 403 denial like any other.
 */
export function metricsEndpoint(deps: AppDeps): Router {
  const createCaller = createCallerFactory(appRouter);
  const router = express.Router();
  router.get('/metrics', serveMetrics);
  return router;

  async function serveMetrics(req: Request, res: Response): Promise<void> {
    const ctx = createRequestContext(deps, req, res);
    try {
      const { contentType, text } = await createCaller(ctx).system.metrics({});
      for (const [name, value] of Object.entries(ctx.response.headers)) res.setHeader(name, value);
      res.setHeader('Content-Type', contentType);
      res.setHeader('Cache-Control', 'no-store');
      res.send(text);
    } catch (error) {
      sendError(res, appErrorFrom(error), ctx.response.headers);
    }
  }
}
