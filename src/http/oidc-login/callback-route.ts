import type { Request, Response } from 'express';
import { authorizationCodeGrant } from 'openid-client';
import { AppError } from '../../core/errors/app-error.js';
import { acceptAccessToken } from './accept-access-token.js';
import { exchangeFailure } from './identity-provider-client.js';
import { clientIp, type LoginContext } from './login-context.js';
import { sessionLifetimeSeconds } from './login-cookies.js';
import { accessTokenOf, sessionFrom } from './token-response.js';

/**
 * GET /auth/callback: the provider sends the browser back with a code. The transaction cookie is
 * spent whatever happens (a code or state is good for one try), the code is exchanged with the
 * PKCE verifier, and openid-client checks state, `iss` and the ID token's issuer, audience, expiry and nonce.
 */
export function callbackRoute(context: LoginContext) {
  return async function callback(req: Request, res: Response): Promise<void> {
    res.setHeader('Cache-Control', 'no-store');
    const transaction = await context.cookies.transaction.read(req);
    context.cookies.transaction.clear(req, res);
    if (!transaction) {
      throw AppError.invalid('No sign-in is under way in this browser (or it took longer than 10 minutes); start again at /auth/login', { reason: 'no_login_transaction' });
    }
    if (typeof req.query.state !== 'string' || req.query.state !== transaction.state) {
      // Checked here as well as by openid-client, so a forged callback never reaches the provider.
      throw AppError.invalid('The sign-in response does not belong to the sign-in this browser started; start again at /auth/login', { reason: 'state_mismatch' });
    }
    const configuration = await context.provider.get();
    // Rebuilt on the public base URL: behind a proxy req's own host and scheme are not what the provider saw.
    const queryStart = req.originalUrl.indexOf('?');
    const currentUrl = new URL(`${context.settings.redirectUri}${queryStart < 0 ? '' : req.originalUrl.slice(queryStart)}`);
    let tokens;
    try {
      tokens = await authorizationCodeGrant(
        configuration,
        currentUrl,
        { pkceCodeVerifier: transaction.verifier, expectedState: transaction.state, expectedNonce: transaction.nonce, idTokenExpected: true },
        context.settings.resource ? { resource: context.settings.resource } : undefined,
      );
    } catch (error) {
      throw exchangeFailure(error, 'sign-in');
    }
    const user = await acceptAccessToken(context, accessTokenOf(tokens), clientIp(req));
    const session = sessionFrom(tokens, user);
    await context.cookies.session.write(req, res, session, sessionLifetimeSeconds(session));
    res.redirect(302, transaction.returnTo);
  };
}
