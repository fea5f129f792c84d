import type { Config } from '../../core/config/load-config.js';

/** What the browser login needs beyond bearer-token checking, read once from the configuration. */
export interface LoginSettings {
  issuerUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  /** The resource indicator asked for, so the provider issues access tokens this service accepts. */
  resource: string | undefined;
  /** OIDC_BASE_URL: the service's public address, where the provider sends the browser back. */
  baseUrl: string;
  redirectUri: string;
  secret: string;
  /** Cookies carry `Secure` (and the `__Host-`/`__Secure-` name prefixes) behind https. */
  secure: boolean;
  timeoutMs: number;
}

export type LoginAvailability =
  | { state: 'disabled' }
  | { state: 'misconfigured'; missing: string[] }
  | { state: 'ready'; settings: LoginSettings };

/**
 * Bearer-token checking needs only the issuer and client id, so AUTH_ENABLED=true without
 * OIDC_BASE_URL or OIDC_SECRET is a valid API-only set-up: the login routes then explain what is
 * missing instead of the whole service refusing to start.
 */
export function loginAvailability(config: Config): LoginAvailability {
  if (!config.AUTH_ENABLED) return { state: 'disabled' };
  const { OIDC_ISSUER_BASE_URL: issuerUrl, OIDC_CLIENT_ID: clientId, OIDC_BASE_URL: baseUrl, OIDC_SECRET: secret } = config;
  const missing = (
    [
      ['OIDC_ISSUER_BASE_URL', issuerUrl],
      ['OIDC_CLIENT_ID', clientId],
      ['OIDC_BASE_URL', baseUrl],
      ['OIDC_SECRET', secret],
    ] as const
  )
    .filter(([, value]) => !value)
    .map(([name]) => name);
  if (!issuerUrl || !clientId || !baseUrl || !secret) return { state: 'misconfigured', missing };
  return {
    state: 'ready',
    settings: {
      issuerUrl,
      clientId,
      clientSecret: config.OIDC_CLIENT_SECRET,
      resource: config.OIDC_AUDIENCE,
      baseUrl,
      redirectUri: `${baseUrl}/auth/callback`,
      secret,
      secure: new URL(baseUrl).protocol === 'https:',
      timeoutMs: config.OIDC_HTTP_TIMEOUT_MS,
    },
  };
}
