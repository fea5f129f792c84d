import type { Request } from 'express';
import { AppError } from '../../core/errors/app-error.js';
import type { AppDeps } from '../../procedures/context.js';
import type { IdentityProviderClient } from './identity-provider-client.js';
import type { LoginCookies } from './login-cookies.js';
import type { LoginSettings } from './login-settings.js';

/** What every login route shares, built once when the app is made. */
export interface LoginContext {
  settings: LoginSettings;
  cookies: LoginCookies;
  provider: IdentityProviderClient;
  deps: Pick<AppDeps, 'auth' | 'store' | 'logger'>;
}

/** The client address as the rest of the service computes it (TRUST_PROXY), for audit entries. */
export function clientIp(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Refuses a request the browser marks as started by another site (`Sec-Fetch-Site`), which the
 * SameSite=Lax session cookie still rides along on when it is a top-level navigation. Browsers
 * without the header, and addresses typed by the user (`none`), pass.
 */
export function refuseOtherSites(req: Request, message: string): void {
  const site = req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') {
    throw new AppError('SECURITY_VIOLATION', message, { details: { reason: 'cross_origin' } });
  }
}
