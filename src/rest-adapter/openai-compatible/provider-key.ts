import type { Request } from 'express';
import type { Config } from '../../core/config/load-config.js';
import { bearerToken } from '../../http/bearer-token.js';

/** Where a /v1 caller puts its own provider key (the Bearer token is authentication's, or a dummy). */
export const PROVIDER_KEY_HEADER = 'x-provider-api-key';

/**
 * The provider keys a /v1 request carries, for the procedure to choose from once it knows the
 * provider (CONTRACT §12): `apiKey`, the X-Provider-Api-Key header, always wins over the server's
 * key. `bearerKey` is the Bearer token while AUTH_ENABLED=false, where OpenAI's SDKs put their
 * `apiKey` (always some token, often a dummy): it is used only when the server has no key for
 * the provider. With auth on, the Bearer token is the caller's access token and never leaves.
 * Both are always set, so a body's own fields of those names never stand in for the headers.
 */
export function providerKeysOf(req: Request, config: Config): { apiKey: string | undefined; bearerKey: string | undefined } {
  const header = req.get(PROVIDER_KEY_HEADER)?.trim();
  return {
    apiKey: header === '' ? undefined : header,
    bearerKey: config.AUTH_ENABLED ? undefined : (bearerToken(req, false) ?? undefined),
  };
}
