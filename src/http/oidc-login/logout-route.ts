import type { Request, Response } from 'express';
import { buildEndSessionUrl } from 'openid-client';
import { recordAudit } from '../../core/audit/record-audit.js';
import { describe } from './identity-provider-client.js';
import { clientIp, refuseOtherSites, type LoginContext } from './login-context.js';

/**
 * GET or POST /auth/logout: forgets the browser's session here, then ends it at the provider too
 * when the provider says how (RP-initiated logout), so the next sign-in asks for credentials again.
 * Logging out never fails locally: an unreachable provider just means landing on `/`.
 * GET (and HEAD, which Express routes to it) stays for the web interface's link, but only from
 * this service's own pages: otherwise any site could sign the user out with a link or an image
 * (the Lax cookie rides on top-level navigations). POST needs no such check: Lax keeps the cookie
 * off cross-site POSTs.
 */
export function logoutRoute(context: LoginContext | null) {
  return async function logout(req: Request, res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    if (req.method !== 'POST') refuseOtherSites(req, 'Logging out by GET is only possible from pages of this service; use POST');
    if (!context) {
      res.redirect(302, '/');
      return;
    }
    const session = await context.cookies.session.read(req);
    context.cookies.session.clear(req, res);
    context.cookies.transaction.clear(req, res);
    if (!session) {
      res.redirect(302, '/');
      return;
    }
    const { logger, store } = context.deps;
    await recordAudit(store, { type: 'auth', userId: session.userId, ip: clientIp(req), details: { action: 'logout', via: 'web' } }).catch((error: unknown) => {
      logger.warn({ err: error }, 'audit of a web logout failed');
    });
    res.redirect(302, await endSessionUrl(context, session.idToken));
  };
}

async function endSessionUrl(context: LoginContext, idToken: string | undefined): Promise<string> {
  try {
    const configuration = await context.provider.get();
    if (!configuration.serverMetadata().end_session_endpoint) return '/';
    return buildEndSessionUrl(configuration, {
      post_logout_redirect_uri: `${context.settings.baseUrl}/`,
      ...(idToken ? { id_token_hint: idToken } : {}),
    }).href;
  } catch (error) {
    context.deps.logger.warn({ cause: describe(error) }, 'logout could not reach the identity provider; the local session is cleared');
    return '/';
  }
}
