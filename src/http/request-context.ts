import type { Request, Response } from 'express';
import { localUser } from '../core/auth/permissions.js';
import { createContextInner, type AppDeps, type Context } from '../procedures/context.js';

/**
 * The procedure context for one HTTP request, shared by the REST bridge and /trpc. With
 * AUTH_ENABLED=false every caller is `local` (CONTRACT §5).
 */
export function createRequestContext(deps: AppDeps, req: Request, res: Response): Context {
  return createContextInner(deps, {
    requestId: res.locals.requestId,
    ip: req.ip ?? req.socket.remoteAddress ?? '',
    user: localUser,
  });
}
