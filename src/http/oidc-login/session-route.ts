import type { Request, Response } from 'express';
import type { User } from '../../core/auth/permissions.js';
import { AppError } from '../../core/errors/app-error.js';
import { clientIp, refuseOtherSites, type LoginContext } from './login-context.js';
import { sessionLifetimeSeconds, type WebSession } from './login-cookies.js';
import { needsRefresh, refreshSession } from './refresh-session.js';

export interface SessionReply {
  success: true;
  authenticated: boolean;
  authEnabled: boolean;
  accessToken?: string;
  expiresAt?: string;
  user?: { userId: string; roles: string[] };
}

/**
 * GET /auth/session: the SPA's access token, refreshed when it is about to expire. The reply holds
 * a bearer token, so it must never be readable by another origin nor kept by a cache.
 */
export function sessionRoute(context: LoginContext | null, authEnabled: boolean) {
  return async function session(req: Request, res: Response): Promise<void> {
    sameOriginOnly(req, res);
    if (!context) {
      // AUTH_ENABLED=false, or web login not configured (then /auth/login says what is missing).
      res.json({ success: true, authenticated: false, authEnabled } satisfies SessionReply);
      return;
    }
    const signedOut = { success: true, authenticated: false, authEnabled: true } satisfies SessionReply;
    let current = await context.cookies.session.read(req);
    if (!current) {
      res.json(signedOut);
      return;
    }
    const ip = clientIp(req);
    if (needsRefresh(current)) {
      const renewed = current.refreshToken ? await refreshSession(context, current, ip) : null;
      // No refresh token and a token that is about to expire is still handed out until it does.
      if (!renewed && (current.refreshToken || current.accessExpiresAt <= Date.now())) {
        context.cookies.session.clear(req, res);
        res.json(signedOut);
        return;
      }
      if (renewed) {
        current = renewed;
        await context.cookies.session.write(req, res, current, sessionLifetimeSeconds(current));
      }
    }
    const user = await userOf(context, current, ip);
    if (!user) {
      context.cookies.session.clear(req, res);
      res.json(signedOut);
      return;
    }
    res.json({
      success: true,
      authenticated: true,
      authEnabled: true,
      accessToken: current.accessToken,
      expiresAt: new Date(current.accessExpiresAt).toISOString(),
      user: { userId: user.id, roles: user.roles },
    } satisfies SessionReply);
  };
}

/** The token's user, as the API would see it; null when the API would refuse it (a rotated-out key, say). */
async function userOf(context: LoginContext, session: WebSession, ip: string): Promise<User | null> {
  try {
    return await context.deps.auth.identify(session.accessToken, ip);
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') return null;
    throw error;
  }
}

/**
 * The global CORS layer gives ALLOWED_ORIGINS the allow headers; here they are withdrawn, and a
 * request a browser marks as coming from another site is refused, so no other origin ever reads
 * the token (not even a trusted one: it should sign in on its own).
 */
function sameOriginOnly(req: Request, res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Vary', 'Cookie');
  for (const header of ['Access-Control-Allow-Origin', 'Access-Control-Allow-Credentials', 'Access-Control-Expose-Headers']) res.removeHeader(header);
  refuseOtherSites(req, 'The session is only given to pages of this service');
}
