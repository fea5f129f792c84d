import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { webcrypto } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

// A real OpenID provider (the npm `oidc-provider`) on 127.0.0.1, port 0, issuing RS256 JWT access
// tokens through the client_credentials grant with a resource indicator. Each test identity is a
// client of its own; its subject, roles and extra claims go into the token it is issued, so tests
// get genuine tokens for any user and role mix. `sign` makes tokens with the provider's own private
// key (or another) for the cases a provider would never issue: no `exp`, a wrong audience, and so on.

export interface TestIdentity {
  sub: string;
  /** Put in `realm_access.roles`, where Keycloak puts realm roles. */
  roles: string[];
  /** Further claims, such as `sid` or `resource_access`. */
  claims?: Record<string, unknown>;
}

export interface SigningKey {
  kid: string;
  privateKey: webcrypto.CryptoKey;
  publicJwk: JWK;
}

export interface TestIdentityProvider extends AsyncDisposable {
  issuer: string;
  /** The service's client id (OIDC_CLIENT_ID). */
  clientId: string;
  /** The resource indicator the provider's tokens are issued for (OIDC_AUDIENCE). */
  audience: string;
  /** Defines (or redefines) an identity; later tokens for it carry the new claims. */
  define(name: string, identity: TestIdentity): void;
  /** A token issued by the provider's /token endpoint for a defined identity. */
  tokenFor(name: string): Promise<string>;
  /** A JWT signed with the current key (or `key`), issuer and audience filled in unless given. */
  sign(claims: JWTPayload, options?: { key?: SigningKey; alg?: string; header?: Record<string, unknown> }): Promise<string>;
  /** The key the provider signs with now. */
  currentKey(): SigningKey;
  /** Replaces the published keys: a new signing key, and the old ones only when `keepOld`. */
  rotateKeys(options: { keepOld: boolean }): Promise<SigningKey>;
  /** How many times the JWKS was fetched. */
  jwksFetches(): number;
  /** Stops answering (connections refused) until `resume`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
}

export async function newSigningKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `key-${crypto.randomUUID()}`;
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

const clientSecret = 'test-client-secret-with-enough-entropy-0123456789';

export async function startIdentityProvider(options: { clientId?: string; audience?: string } = {}): Promise<TestIdentityProvider> {
  const clientId = options.clientId ?? 'assistant';
  const audience = options.audience ?? 'urn:assistant:api';
  const identities = new Map<string, TestIdentity>();
  // The first key signs; the others are only published.
  let signingKey = await newSigningKey();
  let keys: SigningKey[] = [signingKey];
    let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  // Clients are fixed when a provider is made, so a new identity means a new provider instance
  // with the same issuer and keys (tokens issued before stay valid).
  let clientsChanged = false;
  let jwksFetches = 0;
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) jwksFetches += 1;
    handler?.(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  let port = await listenOn(server, 0);
  const issuer = `http://127.0.0.1:${port}`;

  async function build(): Promise<void> {
    const privateJwks = await Promise.all(
      keys.map(async (key) => ({ ...(await exportJWK(key.privateKey)), kid: key.kid, alg: 'RS256', use: 'sig' })),
    );
    const provider = new Provider(issuer, {
      clients: [...identities.keys()].map((name) => ({
        client_id: name,
        client_secret: clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      })),
      jwks: { keys: privateJwks },
      ttl: { ClientCredentials: 300 },
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: false },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => audience,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({ audience, scope: '', accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } }),
        },
      },
      extraTokenClaims: (_ctx, token) => {
        const identity = identities.get((token as { clientId?: string }).clientId ?? '');
        return identity ? { realm_access: { roles: identity.roles }, azp: clientId, ...identity.claims } : undefined;
      },
      formats: {
        customizers: {
          jwt: (_ctx, token, jwt) => {
            const identity = identities.get((token as { clientId?: string }).clientId ?? '');
            if (identity) jwt.payload.sub = identity.sub;
          },
        },
      },
    });
    const callback = provider.callback();
    handler = (req, res) => {
      void callback(req, res);
    };
  }
  await build();

  async function pause(): Promise<void> {
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
      for (const socket of sockets) socket.destroy();
    });
  }

  return {
    issuer,
    clientId,
    audience,
    define(name, identity) {
      if (!identities.has(name)) clientsChanged = true;
      identities.set(name, identity);
    },
    async tokenFor(name) {
      if (!identities.has(name)) throw new Error(`unknown test identity ${name}`);
      if (clientsChanged) {
        clientsChanged = false;
        await build();
      }
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${name}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: audience }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token request failed: ${body.error ?? response.status} ${body.error_description ?? ''}`);
      return body.access_token;
    },
    async sign(claims, signOptions = {}) {
      const key = signOptions.key ?? signingKey;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, aud: audience, iat: now, exp: now + 300, jti: crypto.randomUUID(), ...claims })
        .setProtectedHeader({ alg: signOptions.alg ?? 'RS256', kid: key.kid, typ: 'at+jwt', ...signOptions.header })
        .sign(key.privateKey);
    },
    currentKey: () => signingKey,
    async rotateKeys({ keepOld }) {
      signingKey = await newSigningKey();
      keys = keepOld ? [signingKey, ...keys] : [signingKey];
      await build();
      return signingKey;
    },
    jwksFetches: () => jwksFetches,
    pause,
    async resume() {
      port = await listenOn(server, port);
    },
    async [Symbol.asyncDispose]() {
      if (server.listening) await pause();
    },
  };
}

async function listenOn(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
