import type { ClusterBus } from '../cluster/cluster-bus.js';
import type { Config } from '../config/load-config.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { DatabaseQuotaBook } from './database-quota-book.js';
import { costMicros, priceOf } from './model-prices.js';
import { PolicyBook } from './policy-book.js';
import type { QuotaBook } from './quota-book.js';
import { RedisQuotaBook } from './redis-quota-book.js';
import { UsageMeter } from './usage-meter.js';
import type { UsageSql } from './usage-sql.js';

export interface Usage {
  policies: PolicyBook;
  meter: UsageMeter;
}

/**
 * CONTRACT §13's parts: the policy document, read before the first request, and the meter every
 * provider call passes through, its reservations in Redis with REDIS_URL and in the database
 * otherwise. Reservations a crashed instance left are settled at once.
 */
export async function createUsage(
  deps: { store: Store; sql: UsageSql; config: Config; logger: Logger; redis?: RedisConnection | undefined; bus?: ClusterBus | undefined },
  instance: string,
): Promise<Usage> {
  const { config } = deps;
  const policies = new PolicyBook(deps.store, deps.logger, config.POLICY_REFRESH_MS, deps.bus);
  await policies.start();
  const prices = config.MODEL_PRICES;
  const options = {
    instance,
    leaseMs: config.QUOTA_LEASE_MS,
    costOf: (provider: Parameters<typeof priceOf>[1], model: string, input: number, output: number) => costMicros(priceOf(prices, provider, model), input, output),
  };
  const book: QuotaBook = deps.redis ? new RedisQuotaBook(deps.redis, deps.sql, options) : new DatabaseQuotaBook(deps.sql, options);
  const meter = new UsageMeter(book, policies, prices, { outputTokens: config.QUOTA_OUTPUT_TOKENS, leaseMs: config.QUOTA_LEASE_MS, sql: deps.sql }, deps.logger);
  await meter.recover().catch(() => undefined);
  return { policies, meter };
}
