import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '../core/errors/app-error.js';
import { ReadinessCheck } from '../core/status/readiness.js';
import type { AppDeps } from '../procedures/context.js';
import { sendError } from './error-response.js';

/**
 * `GET /healthz` (liveness: the process serves; touches nothing) and `GET /readyz` (readiness:
 * the database answers and has every migration this build ships; 503 otherwise). For process
 * managers and orchestrators: plain Express routes outside /api, with no authentication and in
 * no rate group, like `/api/status` (CONTRACT §9). Not in the specification, so not in the
 * OpenAPI document either. A 503 is the contract's error envelope (CONTRACT §2: every error
 * reply outside /v1), with the failing checks in `details`.
 */
export function healthEndpoints(deps: Pick<AppDeps, 'store'>) {
  const readiness = new ReadinessCheck(deps.store);
  const router = express.Router();
  router.get('/healthz', (_req: Request, res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get('/readyz', (_req: Request, res: Response, next) => {
    readiness.check().then((result) => {
      res.setHeader('Cache-Control', 'no-store');
      if (result.ready) {
        res.json({ status: 'ready', checks: result.checks });
        return;
      }
      const message =
        result.checks.database === 'unreachable'
          ? 'Not ready: the database is unreachable (DATABASE_URL)'
          : 'Not ready: the database lacks migrations this version needs (run npm run migrate, or restart the service)';
      sendError(res, new AppError('SERVICE_UNAVAILABLE', message, { details: { checks: result.checks, ...(result.pending ? { pending: result.pending } : {}) } }));
    }, next);
  });
  // A router that matches nothing hands the request on only after a turn of the event loop
  // (setImmediate): every other request would wait that turn here. Its two paths (in any case,
  // with or without a trailing slash) both start with one of these, so only such requests enter.
  return function healthRoutes(req: Request, res: Response, next: NextFunction): void {
    const path = req.path.toLowerCase();
    if (path.startsWith('/healthz') || path.startsWith('/readyz')) router(req, res, next);
    else next();
  };
}
