import type { Request } from 'express';
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
