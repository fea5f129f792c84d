import type { Request, Response } from 'express';
import { buildAuthorizationUrl, calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier, randomState } from 'openid-client';
import type { LoginContext } from './login-context.js';
import { safeReturnTo } from './return-to.js';

/**
 * `offline_access` asks for a refresh token: providers such as oidc-provider and Auth0 issue one
 * only then, and without it the browser would be sent back to the provider every few minutes.
 */
const scope = 'openid profile email offline_access';

/** GET /auth/login: sends the browser to the provider's sign-in page (authorization code + PKCE S256). */
export function loginRoute(context: LoginContext) {
  return async function login(req: Request, res: Response): Promise<void> {
    const returnTo = safeReturnTo(req.query.returnTo);
    const configuration = await context.provider.get();
    const verifier = randomPKCECodeVerifier();
    const state = randomState();
    const nonce = randomNonce();
    const url = buildAuthorizationUrl(configuration, {
      redirect_uri: context.settings.redirectUri,
      response_type: 'code',
      scope,
      state,
      nonce,
      code_challenge: await calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      // Names this service as the token's audience: RFC 8707's `resource` (oidc-provider issues JWT
      // access tokens only so), and Auth0's `audience`. Providers ignore parameters they do not know.
      ...(context.settings.resource ? { resource: context.settings.resource, audience: context.settings.resource } : {}),
    });
    await context.cookies.transaction.write(req, res, { verifier, state, nonce, returnTo });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, url.href);
  };
}
