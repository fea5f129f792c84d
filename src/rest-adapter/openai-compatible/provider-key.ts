import type { Request } from 'express';
import type { Config } from '../../core/config/load-config.js';
import { bearerToken } from '../../http/bearer-token.js';

/** Where a /v1 caller puts its provider key when the Bearer token is taken by authentication. */
export const PROVIDER_KEY_HEADER = 'x-provider-api-key';

/**
 * The provider key of a /v1 request. `X-Provider-Api-Key` always wins. Without it, and only while
 * AUTH_ENABLED=false, the Bearer token is the key: that is where OpenAI's SDKs put their
 * `apiKey`, so an unchanged client works. With auth on, the Bearer token is the caller's OIDC
 * access token and is never sent to a model provider.
 */
export function providerKeyOf(req: Request, config: Config): string | undefined {
  const header = req.get(PROVIDER_KEY_HEADER)?.trim();
  if (header) return header;
  if (config.AUTH_ENABLED) return undefined;
  return bearerToken(req, false) ?? undefined;
}
