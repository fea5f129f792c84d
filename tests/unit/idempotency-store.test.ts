import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterBus } from '../../src/core/cluster/cluster-bus.js';
import { ClusterSignature } from '../../src/core/cluster/cluster-signature.js';
import { claimKey } from '../../src/core/idempotency/claim-key.js';
import type { IdempotencyStore, KeptAnswer } from '../../src/core/idempotency/idempotency-store.js';
import { MemoryIdempotencyStore } from '../../src/core/idempotency/memory-idempotency-store.js';
import { RedisIdempotencyStore } from '../../src/core/idempotency/redis-idempotency-store.js';
import { createLogger } from '../../src/core/logger.js';
import { connectRedis, type RedisConnection } from '../../src/core/redis/redis-connection.js';
import { freshRedisPrefix, redisAvailable, redisUrl } from '../helpers/redis.js';

// Both stores behind CONTRACT §12's Idempotency-Key hold the same rules: one claim per key, a
// claim only its owner can answer, release or renew (not a later claimer after it expired), and
// waiters that see the answer, or one of them the freed key.

const answer: KeptAnswer = { ok: true, data: { streamId: 'x', after: 0, list: [] }, headers: { 'X-Conversation-Id': 'c' } };
const RUNNING_TTL_MS = 300;

function storeRules(name: string, makeStore: () => IdempotencyStore) {
  describe(name, () => {
    let scopeCount = 0;
    const newScope = () => `${name}-${process.pid}-${Date.now()}-${scopeCount++}`;

    it('claims a key once; a repeat waits, then gets the answer as it was kept; another request under it is reused', async () => {
      const store = makeStore();
      const scope = newScope();
      const first = await claimKey(store, scope, 'f1');
      expect(first.kind).toBe('claimed');
      expect(await store.claim(scope, 'f1')).toMatchObject({ kind: 'running' });
      expect(await store.claim(scope, 'f2')).toEqual({ kind: 'reused' });
      const waiting = claimKey(store, scope, 'f1');
      await store.answer(scope, first.kind === 'claimed' ? first.token : '', answer, 5000);
      expect(await waiting).toEqual({ kind: 'answered', answer });
      await expect(claimKey(store, scope, 'f2')).rejects.toMatchObject({ code: 'INVALID_REQUEST', details: { reason: 'idempotency_key_reused' } });
    });

    it('a released key goes to exactly one of the requests waiting for it', async () => {
      const store = makeStore();
      const scope = newScope();
      const first = await claimKey(store, scope, 'f');
      const giveUp = new AbortController();
      const waiters = [1, 2, 3].map(() => claimKey(store, scope, 'f', giveUp.signal).catch(() => 'gave up'));
      await new Promise((resolve) => setTimeout(resolve, 50));
      await store.release(scope, first.kind === 'claimed' ? first.token : '');
      // Less than the running TTL: the new claim, never renewed here, has not expired yet.
      await new Promise((resolve) => setTimeout(resolve, RUNNING_TTL_MS / 2));
      giveUp.abort();
      const claims = await Promise.all(waiters);
      expect(claims.filter((claim) => typeof claim === 'object' && claim.kind === 'claimed')).toHaveLength(1);
      expect(claims.filter((claim) => claim === 'gave up')).toHaveLength(2);
    });

    it('a claim whose owner stops renewing it expires; the stale owner can then neither answer nor release the new claim', async () => {
      const store = makeStore();
      const scope = newScope();
      const stale = await store.claim(scope, 'f');
      await new Promise((resolve) => setTimeout(resolve, RUNNING_TTL_MS + 150));
      const fresh = await store.claim(scope, 'f');
      expect(fresh.kind).toBe('claimed');
      const staleToken = stale.kind === 'claimed' ? stale.token : '';
      await store.answer(scope, staleToken, answer, 5000);
      await store.release(scope, staleToken);
      expect(await store.claim(scope, 'f')).toMatchObject({ kind: 'running' });
      // Its owner renews it past the running TTL.
      await store.keep(scope, fresh.kind === 'claimed' ? fresh.token : '', 5000);
      await new Promise((resolve) => setTimeout(resolve, RUNNING_TTL_MS + 150));
      expect(await store.claim(scope, 'f')).toMatchObject({ kind: 'running' });
    });
  });
}

storeRules('memory', () => new MemoryIdempotencyStore(RUNNING_TTL_MS));

describe.runIf(redisAvailable)('redis', () => {
  let redis: RedisConnection;
  let bus: ClusterBus;
  const logger = createLogger('silent');
  beforeAll(async () => {
    redis = await connectRedis(redisUrl, freshRedisPrefix(), logger);
    await redis.waitUntilReady(2000);
    bus = new ClusterBus(redis, logger, new ClusterSignature('idempotency-store-test-secret'));
  });
  afterAll(async () => {
    await bus.close();
    await redis.close();
  });
  storeRules('redis store', () => new RedisIdempotencyStore(redis, bus, RUNNING_TTL_MS));
});
