import { createHmac, type webcrypto } from 'node:crypto';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { exportSPKI, importJWK } from 'jose';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionsOf, roles } from '../../src/core/auth/permissions.js';
import type { AppRouter } from '../../src/index.js';
import { requestAs, startAuthService } from '../helpers/auth-service.js';
import { newSigningKey, startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import type { TestService } from '../helpers/test-service.js';

// CONTRACT §5's token rules through HTTP, against a real OpenID provider: what is accepted, every
// way a token is refused (401 with a Bearer challenge), where the token may come from, and roles.

const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('bearer tokens', () => {
  let idp: TestIdentityProvider;
  let service: TestService;

  beforeAll(async () => {
    idp = await startIdentityProvider();
    service = await startAuthService('sqlite', idp, { RATE_LIMIT_ENABLED: 'false' });
  });
  afterAll(async () => {
    await service[Symbol.asyncDispose]();
    await idp[Symbol.asyncDispose]();
  });

  const me = (token: string | null) => requestAs(service, token, 'GET', '/api/auth/me');

  it.each(roles)('a token the provider issued for a %s is accepted, and /api/auth/me shows its roles and permissions', async (role) => {
    idp.define(`issued-${role}`, { sub: `user-${role}`, roles: [role] });
    const reply = await me(await idp.tokenFor(`issued-${role}`));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ userId: `user-${role}`, roles: [role], permissions: permissionsOf([role]), authEnabled: true });
  });

  it('roles are the union of the claim paths (realm, this client, top level); unknown names and other clients are ignored', async () => {
    const token = await idp.sign({
      sub: 'mixed',
      realm_access: { roles: ['User', 'offline_access', 'uma_authorization'] },
      resource_access: { [idp.clientId]: { roles: ['Dev'] }, 'another-client': { roles: ['TheDude'] } },
      roles: ['Admin', 'admin', 'superuser'],
    });
    const reply = await me(token);
    expect(reply.body).toMatchObject({ userId: 'mixed', roles: ['User', 'Admin', 'Dev'] });
    expect(reply.body.permissions).toEqual(permissionsOf(['User', 'Admin', 'Dev']));
  });

  it('a valid token with no known role is authenticated but holds nothing: me answers, everything guarded is 403', async () => {
    const token = await idp.sign({ sub: 'nobody-special', realm_access: { roles: ['viewer'] } });
    expect((await me(token)).body).toEqual({ userId: 'nobody-special', roles: [], permissions: [], authEnabled: true });
    const list = await requestAs(service, token, 'GET', '/api/conversations');
    expect(list.status).toBe(403);
    expect(list.body.error).toMatchObject({ code: 'FORBIDDEN', details: { missing: 'conversations:list' } });
  });

  it('aud may name the audience, or azp the client id; exp and nbf are allowed 30 s of clock skew', async () => {
    const accepted = [
      await idp.sign({ sub: 'a', aud: ['something-else', idp.audience] }),
      await idp.sign({ sub: 'a', aud: 'account', azp: idp.clientId }),
      await idp.sign({ sub: 'a', exp: now() - 20 }),
      await idp.sign({ sub: 'a', nbf: now() + 20 }),
    ];
    for (const token of accepted) expect((await me(token)).status).toBe(200);
  });

  it('a token accepted before is refused once it expires, though the service remembers accepting it', async () => {
    const token = await idp.sign({ sub: 'short-lived', exp: now() - 28 });
    expect((await me(token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const reply = await me(token);
    expect(reply.status).toBe(401);
    expect(reply.body.error.details.reason).toBe('expired');
  });

  describe('refused with 401 UNAUTHORIZED and a Bearer challenge', () => {
    const cases: [string, () => Promise<string | null>, string][] = [
      ['no token', () => Promise.resolve(null), 'missing'],
      ['not a JWT', () => Promise.resolve('not-a-jwt'), 'malformed'],
      ['three parts of garbage', () => Promise.resolve('abc.def.ghi'), 'malformed'],
      ['alg:none', () => Promise.resolve(`${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'x', iss: idp.issuer, aud: idp.audience, exp: now() + 60 })}.`), 'algorithm_not_allowed'],
      ['HS256 keyed with the published public key', () => hs256WithPublicKey({ sub: 'x', iss: idp.issuer, aud: idp.audience, exp: now() + 60 }), 'algorithm_not_allowed'],
      ['a signature that does not match', async () => tamper(await idp.sign({ sub: 'x' })), 'bad_signature'],
      ['signed by an unpublished key', async () => idp.sign({ sub: 'x' }, { key: await newSigningKey() }), 'unknown_key'],
      ['expired beyond the skew', () => idp.sign({ sub: 'x', exp: now() - 40 }), 'expired'],
      ['not valid for another minute', () => idp.sign({ sub: 'x', nbf: now() + 60 }), 'not_yet_valid'],
      ['no exp', () => idp.sign({ sub: 'x', exp: undefined }), 'no_expiry'],
      ['another issuer', () => idp.sign({ sub: 'x', iss: 'https://evil.example' }), 'wrong_issuer'],
      ['another audience and no azp', () => idp.sign({ sub: 'x', aud: 'https://other.example/api' }), 'wrong_audience'],
      ['azp of another client', () => idp.sign({ sub: 'x', aud: 'account', azp: 'other-client' }), 'wrong_audience'],
      ['no subject', () => idp.sign({}), 'no_subject'],
      ['an ID token (Keycloak marks it typ ID)', () => idp.sign({ sub: 'x', typ: 'ID' }), 'not_an_access_token'],
      ['a header typ of another kind of JWT', () => idp.sign({ sub: 'x' }, { header: { typ: 'secevent+jwt' } }), 'not_an_access_token'],
    ];

    it.each(cases)('%s', async (_name, makeToken, reason) => {
      const token = await makeToken();
      const reply = await me(token);
      expect(reply.status).toBe(401);
      expect(reply.body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED', details: { reason } } });
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
      if (token) expect(reply.text).not.toContain(token);
    });

    async function hs256WithPublicKey(claims: Record<string, unknown>): Promise<string> {
      // The classic confusion attack: HMAC keyed with the RSA public key, as PEM text.
      const publicKey = await importJWK(idp.currentKey().publicJwk, 'RS256');
      const secret = await exportSPKI(publicKey as webcrypto.CryptoKey);
      const signingInput = `${base64url({ alg: 'HS256', typ: 'JWT', kid: idp.currentKey().kid })}.${base64url(claims)}`;
      return `${signingInput}.${createHmac('sha256', secret).update(signingInput).digest('base64url')}`;
    }
  });

  it('hostile tokens are 401 in the envelope, never a 5xx, and leave the service answering', async () => {
    const claims = { sub: 'x', iss: idp.issuer, aud: idp.audience, exp: now() + 60 };
    const hostile = [
      'a'.repeat(8000),
      '...',
      'a.b.c.d.e',
      `${base64url({ alg: 'RS256', kid: 'k'.repeat(5000) })}.${base64url(claims)}.c2ln`,
      `${base64url({ alg: 'RS256', crit: ['exp'] })}.${base64url(claims)}.c2ln`,
      `${base64url({ alg: 'RS256' })}.${Buffer.from('[[[[[[').toString('base64url')}.c2ln`,
      `${base64url({ alg: 'RS256' })}.${base64url({ ...claims, nested: JSON.parse('['.repeat(2000) + ']'.repeat(2000)) })}.c2ln`,
      `${base64url({ alg: ['RS256'] })}.${base64url(claims)}.c2ln`,
      `${base64url({ alg: 'RS256', kid: { $gt: '' } })}.${base64url(claims)}.c2ln`,
      'Ã©Ã¨.Ã©.Ã©',
    ];
    for (const token of hostile) {
      const reply = await me(token);
      expect(reply.status, token.slice(0, 60)).toBe(401);
      expect(reply.body.error.code).toBe('UNAUTHORIZED');
    }
    const lowerCaseScheme = await requestAs(service, null, 'GET', '/api/auth/me', { headers: { authorization: `bearer   ${await idp.sign({ sub: 'casual' })}` } });
    expect(lowerCaseScheme.status).toBe(200);
  });

  it('an Authorization header of another scheme is refused, not taken for no credential', async () => {
    const reply = await requestAs(service, null, 'GET', '/api/auth/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(reply.status).toBe(401);
    expect(reply.body.error.details.reason).toBe('malformed');
  });

  it('access_token in the query is taken on SSE GETs only', async () => {
    const token = await idp.sign({ sub: 'query-user', realm_access: { roles: ['User'] } });
    const unknownStream = '/api/streams/3f8a1c52-6a34-4e0f-9d7e-2c1b5a4f8e90';
    expect((await service.request('GET', unknownStream)).status).toBe(401);
    const viaQuery = await service.request('GET', `${unknownStream}?access_token=${token}`);
    expect(viaQuery.status).toBe(404);
    const notSse = await service.request('GET', `/api/conversations?access_token=${token}`);
    expect(notSse.status).toBe(401);
    expect(notSse.body.error.details.reason).toBe('missing');
  });

  it('/trpc takes the same bearer token, through the official typed client', async () => {
    const token = await idp.sign({ sub: 'rpc-user', realm_access: { roles: ['Admin'] } });
    const client = (headers: Record<string, string>) =>
      createTRPCClient<AppRouter>({ links: [httpLink({ url: `${service.url}/trpc`, transformer: superjson, headers })] });
    expect(await client({ authorization: `Bearer ${token}` }).system.me.query({})).toMatchObject({ userId: 'rpc-user', roles: ['Admin'] });
    const refused = await client({}).system.me.query({}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TRPCClientError);
    expect((refused as TRPCClientError<AppRouter>).data).toMatchObject({ appCode: 'UNAUTHORIZED', httpStatus: 401 });
    // The raw reply carries the same challenge as REST's.
    const raw = await requestAs(service, 'garbage', 'GET', `/trpc/system.me?input=${encodeURIComponent(JSON.stringify({ json: {} }))}`);
    expect(raw.status).toBe(401);
    expect(raw.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });
});

/** The same token with its signature's last characters changed. */
function tamper(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  const flipped = signature.slice(0, -4) + (signature.endsWith('AAAA') ? 'BBBB' : 'AAAA');
  return `${header}.${payload}.${flipped}`;
}
