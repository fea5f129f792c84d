import type { ClusterBus } from '../cluster/cluster-bus.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { RUNNING_CLAIM_TTL_MS } from './claim-key.js';
import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryIdempotencyStore } from './memory-idempotency-store.js';
import { RedisIdempotencyStore } from './redis-idempotency-store.js';

/** Shared through Redis when the instances share one (REDIS_URL), else this instance's own. */
export function createIdempotencyStore(shared?: { redis: RedisConnection; bus: ClusterBus }): IdempotencyStore {
  return shared ? new RedisIdempotencyStore(shared.redis, shared.bus, RUNNING_CLAIM_TTL_MS) : new MemoryIdempotencyStore(RUNNING_CLAIM_TTL_MS);
}
