import type { DatabaseKind } from './databases.js';
import type { TestIdentityProvider } from './identity-provider.js';
import { startTestService, type TestResponse, type TestService } from './test-service.js';

/** The service with AUTH_ENABLED=true against `idp`; more settings in `env`. */
export function startAuthService(kind: DatabaseKind, idp: Pick<TestIdentityProvider, 'issuer' | 'clientId' | 'audience'>, env: Record<string, string> = {}): Promise<TestService> {
  return startTestService(kind, {
    AUTH_ENABLED: 'true',
    OIDC_ISSUER_BASE_URL: idp.issuer,
    OIDC_CLIENT_ID: idp.clientId,
    OIDC_AUDIENCE: idp.audience,
    ...env,
  });
}

/** A request with `Authorization: Bearer <token>` (no header when token is null). */
export function requestAs(
  service: TestService,
  token: string | null,
  method: string,
  path: string,
  options: { json?: unknown; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const headers = { ...options.headers, ...(token === null ? {} : { authorization: `Bearer ${token}` }) };
  return service.request(method, path, { ...options, headers });
}
