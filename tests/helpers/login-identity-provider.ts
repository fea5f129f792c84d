import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK } from 'jose';
import Provider from 'oidc-provider';
import { newSigningKey } from './identity-provider.js';

// A real OpenID provider (the npm `oidc-provider`) for the browser sign-in: the authorization code
// grant with PKCE and refresh tokens, its development login and consent pages (any login name,
// any password), JWT access tokens for the service's resource, and RP-initiated logout. Users'
// roles go into `realm_access.roles` of their access tokens, and a per-sign-in id into `sid`,
// as Keycloak does, so the service's session audit sees one session across refreshes.

export interface LoginIdentityProvider extends AsyncDisposable {
  issuer: string;
  /** The confidential client (OIDC_CLIENT_ID with OIDC_CLIENT_SECRET). */
  clientId: string;
  clientSecret: string;
  /** A public client of the same service (no secret: PKCE alone). */
  publicClientId: string;
  audience: string;
  /** Roles of a login name; unknown names sign in with none. */
  setRoles(login: string, roles: string[]): void;
  /** How many refresh token grants the token endpoint has answered, honoured or refused. */
  refreshGrants(): number;
}

export interface LoginProviderOptions {
  /** The service's public base URL (OIDC_BASE_URL): its callback and post-logout addresses are registered. */
  serviceBaseUrl: string;
  /** Access token lifetime in seconds. */
  accessTokenTtl?: number;
}

const clientSecret = 'web-login-client-secret-with-enough-entropy-0123456789';

export async function startLoginIdentityProvider(options: LoginProviderOptions): Promise<LoginIdentityProvider> {
  const audience = 'urn:assistant:api';
  const clientId = 'assistant-web';
  const publicClientId = 'assistant-spa';
  const roles = new Map<string, string[]>();
  const signingKey = await newSigningKey();
  const sockets = new Set<Socket>();
  // The provider needs the issuer, hence the port, before it exists: requests meanwhile get 503.
  const route: { handler?: RequestListener } = {};
  const server = createServer((req, res) => {
    if (route.handler) route.handler(req, res);
    else res.writeHead(503).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listenOn(server);
  const issuer = `http://127.0.0.1:${port}`;
  const redirect = {
    redirect_uris: [`${options.serviceBaseUrl}/auth/callback`],
    post_logout_redirect_uris: [`${options.serviceBaseUrl}/`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code' as const],
  };

  const provider = new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, ...redirect },
      { client_id: publicClientId, token_endpoint_auth_method: 'none', ...redirect },
    ],
    jwks: { keys: [{ ...(await exportJWK(signingKey.privateKey)), kid: signingKey.kid, alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['login-provider-cookie-key-for-tests-only'] },
    claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.test`, name: sub }) }),
    pkce: { required: () => true },
    // oidc-provider keeps `offline_access` only with prompt=consent; the service asks without a prompt.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Every refresh spends its refresh token, and reusing a spent one revokes the grant.
    rotateRefreshToken: true,
    ttl: { AccessToken: options.accessTokenTtl ?? 300, IdToken: 300, RefreshToken: 3600, Session: 3600, Grant: 3600, Interaction: 600 },
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          audience,
          scope: '',
          accessTokenFormat: 'jwt',
          accessTokenTTL: options.accessTokenTtl ?? 300,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      // oidc-provider does not hand its session id to this hook; the grant lasts exactly as long
      // as one sign-in's refresh chain, so it stands in for Keycloak's `sid`.
      const { accountId, grantId } = token as { accountId?: string; grantId?: string };
      if (!accountId) return undefined;
      return { realm_access: { roles: roles.get(accountId) ?? [] }, ...(grantId ? { sid: grantId } : {}) };
    },
  });
  let refreshGrants = 0;
  const countRefresh = (ctx: { oidc?: { params?: { grant_type?: unknown } } }) => {
    if (ctx.oidc?.params?.grant_type === 'refresh_token') refreshGrants += 1;
  };
  provider.on('grant.success', countRefresh);
  provider.on('grant.error', countRefresh);
  const handler = provider.callback();
  route.handler = (req, res) => {
    void handler(req, res);
  };

  return {
    issuer,
    clientId,
    clientSecret,
    publicClientId,
    audience,
    setRoles(login, loginRoles) {
      roles.set(login, loginRoles);
    },
    refreshGrants: () => refreshGrants,
    async [Symbol.asyncDispose]() {
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

/** A loopback port that was free a moment ago, for a service that must know its own address before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const port = await listenOn(server);
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  return port;
}

async function listenOn(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
