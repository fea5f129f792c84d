import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../core/errors/app-error.js';
import type { AppDeps } from '../../procedures/context.js';
import { sendError } from '../error-response.js';
import { callbackRoute } from './callback-route.js';
import { IdentityProviderClient } from './identity-provider-client.js';
import type { LoginContext } from './login-context.js';
import { loginCookies } from './login-cookies.js';
import { loginRoute } from './login-route.js';
import { loginAvailability } from './login-settings.js';
import { logoutRoute } from './logout-route.js';
import { sessionRoute } from './session-route.js';

/** Weaker than this and the cookie key is only as strong as a guessable password. */
const recommendedSecretLength = 32;

/**
 * The browser sign-in of the web interface (CONTRACT §5: public, no rate group). The SPA reads
 * `/auth/session` for its bearer token; everything else in the service still sees only bearer tokens.
 * Mounted after the Host guard and CORS, before the rate limits and authentication.
 */
export function oidcLoginRouter(deps: AppDeps): Router {
  const router = Router();
  const availability = loginAvailability(deps.config);
  let context: LoginContext | null = null;
  let unavailable: AppError | null = null;

  if (availability.state === 'disabled') {
    // Nothing to sign in to: the routes do not exist, as the rest of the API's unknown paths.
    unavailable = new AppError('NOT_FOUND', 'Not found: web login is off (AUTH_ENABLED=false)');
  } else if (availability.state === 'misconfigured') {
    const { missing } = availability;
    deps.logger.warn({ missing }, 'AUTH_ENABLED=true without the web login settings: bearer tokens work, /auth/login answers 500 until they are set');
    unavailable = new AppError('INTERNAL_ERROR', `Web login is not configured: set ${missing.join(' and ')}`, { details: { missing } });
  } else {
    const { settings } = availability;
    if (settings.secret.length < recommendedSecretLength) {
      deps.logger.warn(`OIDC_SECRET is shorter than ${recommendedSecretLength} characters; use a long random value`);
    }
    context = { settings, cookies: loginCookies(settings), provider: new IdentityProviderClient(settings, deps.logger), deps };
  }

  const refuse: RequestHandler = (_req, res) => {
    if (unavailable) sendError(res, unavailable);
  };
  router.get('/auth/login', context ? handle(loginRoute(context)) : refuse);
  router.get('/auth/callback', context ? handle(callbackRoute(context)) : refuse);
  router.get('/auth/session', handle(sessionRoute(context, availability.state !== 'disabled')));
  router.get('/auth/logout', handle(logoutRoute(context)));
  router.post('/auth/logout', handle(logoutRoute(context)));
  return router;
}

/**
 * Failures answer the contract's envelope here: the app's last-resort handler would turn any
 * AppError with a 4xx status into a generic "Bad request". Anything else still goes there.
 */
function handle(route: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof AppError) sendError(res, error);
      else next(error);
    });
  };
}
