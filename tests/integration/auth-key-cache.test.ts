import { jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../src/core/auth/authenticator.js';
import { IssuerKeys } from '../../src/core/auth/issuer-keys.js';
import { loadConfig } from '../../src/core/config/load-config.js';
import type { Store } from '../../src/core/db/store.js';
import { appErrorFrom } from '../../src/procedures/error-mapping.js';
import { createLogger } from '../../src/core/logger.js';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/identity-provider.js';
import { waitFor } from '../helpers/wait-for.js';

// The issuer's key cache and the remembered verdicts, against a real OpenID provider: a stale key
// set keeps serving while it is refreshed, and a key removed by a refresh is never vouched for by
// a verdict reached under the set before.

const logger = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the issuer key cache', () => {
  let idp: TestIdentityProvider;
  beforeEach(async () => {
    idp = await startIdentityProvider();
  });
  afterEach(async () => {
    await idp[Symbol.asyncDispose]();
  });

  it('a stale set keeps serving, also while the provider is down, and is replaced in the background', async () => {
    const keys = new IssuerKeys({ issuerUrl: idp.issuer, timeoutMs: 1000, logger, maxAgeMs: 300 });
    const verify = (token: string) => jwtVerify(token, keys.getKey, { issuer: idp.issuer });
    const byOldKey = await idp.sign({ sub: 'a' });
    await verify(byOldKey);
    const generation = keys.generation;

    await idp.rotateKeys({ keepOld: false });
    await idp.pause();
    await sleep(350);
    // Stale, and the provider unreachable: the cached set still answers, nothing waits.
    await verify(byOldKey);
    await idp.resume();
    await sleep(1100); // past the back-off that follows the failed refresh
    await verify(byOldKey); // stale still: served once more, and refreshed behind it
    await waitFor(() => (keys.generation > generation ? true : undefined), 3000, 'the background refresh');
    await expect(verify(byOldKey)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    await verify(await idp.sign({ sub: 'b' }));
  });

  it('a refetch that finds the same keys does not invalidate what was verified under them', async () => {
    const keys = new IssuerKeys({ issuerUrl: idp.issuer, timeoutMs: 1000, logger, unknownKeyCooldownMs: 0 });
    await jwtVerify(await idp.sign({ sub: 'a' }), keys.getKey, { issuer: idp.issuer });
    const generation = keys.generation;
    const fetches = idp.jwksFetches();
    const forged = await idp.sign({ sub: 'x' }, { header: { kid: 'made-up' } });
    await expect(jwtVerify(forged, keys.getKey, { issuer: idp.issuer })).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    expect(idp.jwksFetches()).toBe(fetches + 1);
    expect(keys.generation).toBe(generation);
  });

  it('a token verified just before a refresh removed its key is not remembered as valid under the new set', async () => {
    // The token's first request writes its session slowly (held at a gate), while another token
    // makes the service refetch the keys, which no longer hold the first token's key.
    const opener: { open?: () => void } = {};
    const gate = new Promise<void>((resolve) => {
      opener.open = resolve;
    });
    let sessionWrites = 0;
    const held = async <T>(value: T): Promise<T> => {
      sessionWrites += 1;
      await gate;
      return value;
    };
    const store = {
      db: {
        authSession: { create: () => held({}), updateMany: () => Promise.resolve({ count: 0 }) },
        authUser: { findUnique: () => Promise.resolve(null), create: () => Promise.resolve({}), updateMany: () => Promise.resolve({ count: 0 }) },
        auditEntry: { create: () => Promise.resolve({}) },
      },
    } as unknown as Store;
    const config = loadConfig(
      { AUTH_ENABLED: 'true', OIDC_ISSUER_BASE_URL: idp.issuer, OIDC_CLIENT_ID: idp.clientId, OIDC_AUDIENCE: idp.audience },
      null,
    );
    const auth = createAuthenticator(config, store, logger);
    auth.warmUp();
    await waitFor(() => (idp.jwksFetches() >= 1 ? true : undefined));
    await sleep(1100); // past the refetch cooldown

    const byOldKey = await idp.sign({ sub: 'old-key-user' });
    const first = auth.identify(byOldKey, '203.0.113.1');
    await waitFor(() => (sessionWrites === 1 ? true : undefined));
    await idp.rotateKeys({ keepOld: false });
    const second = auth.identify(await idp.sign({ sub: 'new-key-user' }), '203.0.113.2');
    await waitFor(() => (sessionWrites === 2 ? true : undefined)); // verified after the refetch
    opener.open?.();
    expect((await first).id).toBe('old-key-user');
    expect((await second).id).toBe('new-key-user');

    const again = await auth.identify(byOldKey, '203.0.113.1').catch((error: unknown) => error);
    expect(appErrorFrom(again)).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'unknown_key' } });
  });
});
