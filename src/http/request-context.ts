import type { Request, Response } from 'express';
import type { User } from '../core/auth/permissions.js';
import { createContextInner, type AppDeps, type Context } from '../procedures/context.js';
import { bearerToken } from './bearer-token.js';

/**
 * The procedure context for one HTTP request, shared by the REST bridge and /trpc. The token comes
 * from the Authorization header, or from `access_token` in the query where `acceptQueryToken`
 * (SSE GETs, which browsers' EventSource cannot give headers: CONTRACT §5), or for /trpc
 * subscriptions from the `token` of tRPC's connection parameters (the same EventSource limit).
 */
export function createRequestContext(
  deps: AppDeps,
  req: Request,
  res: Response,
  options: { acceptQueryToken?: boolean; connectionToken?: string } = {},
): Context {
  const ip = req.ip ?? req.socket.remoteAddress ?? '';
  let caller: Promise<User> | undefined;
  const token = () => bearerToken(req, options.acceptQueryToken ?? false) ?? options.connectionToken ?? null;
  return createContextInner(deps, {
    requestId: res.locals.requestId,
    ip,
    identify: () => (caller ??= deps.auth.identify(token(), ip)),
    idempotencyKey: req.get('idempotency-key'),
    lastEventId: req.get('last-event-id'),
  });
}
