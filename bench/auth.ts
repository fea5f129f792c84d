// `tsx bench/auth.ts` (part of `npm run bench`): what token verification costs per request. The
// built service runs with AUTH_ENABLED=false, then =true against a minimal issuer on 127.0.0.1
// (discovery + JWKS, RS256 and ES256 keys), and GET /api/auth/me, which does nothing else, is loaded
// each way.
// "a new token every request" is the login path: a session row, a user row and an audit entry.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startBuiltService } from './built-service.js';
import { load, type LoadResult } from './http-load.js';

const audience = 'urn:assistant:bench';

async function startIssuer() {
  const rsa = await generateKeyPair('RS256');
  const ec = await generateKeyPair('ES256');
  const keys = [
    { ...(await exportJWK(rsa.publicKey)), kid: 'rsa', alg: 'RS256', use: 'sig' },
    { ...(await exportJWK(ec.publicKey)), kid: 'ec', alg: 'ES256', use: 'sig' },
  ];
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
    else res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (alg: 'RS256' | 'ES256', sub: string) =>
    new SignJWT({ sub, realm_access: { roles: ['User'] } })
      .setProtectedHeader({ alg, kid: alg === 'RS256' ? 'rsa' : 'ec' })
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime('1h')
      .setJti(crypto.randomUUID())
      .sign(alg === 'RS256' ? rsa.privateKey : ec.privateKey);
  return { issuer, sign, close: () => server.close() };
}

const path = '/api/auth/me';
const bearer = (token: string) => () => ({ authorization: `Bearer ${token}` });

async function measure(env: Record<string, string>, headers: () => Record<string, string>): Promise<LoadResult> {
  const service = await startBuiltService(env);
  try {
    await load(`${service.url}${path}`, 10, 1, headers); // warm-up
    return await load(`${service.url}${path}`, 50, 5, headers);
  } finally {
    await service.stop();
  }
}

const issuer = await startIssuer();
try {
  const authEnv = { AUTH_ENABLED: 'true', OIDC_ISSUER_BASE_URL: issuer.issuer, OIDC_CLIENT_ID: 'bench', OIDC_AUDIENCE: audience };
  const fresh = await Promise.all(Array.from({ length: 30_000 }, (_, index) => issuer.sign('ES256', `user-${index % 500}`)));
  let next = 0;
  const rows: [string, LoadResult][] = [
    ['AUTH_ENABLED=false', await measure({}, () => ({}))],
    ['RS256 token, the same one every request', await measure(authEnv, bearer(await issuer.sign('RS256', 'bench-user')))],
    ['ES256 token, the same one every request', await measure(authEnv, bearer(await issuer.sign('ES256', 'bench-user')))],
    ['ES256, a new token every request (login audit)', await measure(authEnv, () => ({ authorization: `Bearer ${fresh[next++ % fresh.length] ?? ''}` }))],
  ];
  console.log(`GET ${path}, 50 keep-alive clients for 5 s, SQLite\n`);
  console.log(
    [
      '| authentication | req/s | p50 | p99 | errors |',
      '|---|---|---|---|---|',
      ...rows.map(([label, r]) => `| ${label} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} ms | ${r.p99.toFixed(2)} ms | ${r.errors} of ${r.requests} |`),
    ].join('\n'),
  );
} finally {
  issuer.close();
}
