import { createClient } from 'redis';

// Scale-out tests need the machine's Redis. CI must run them, so there a missing one fails the
// suite; elsewhere they are skipped, saying why.

export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const redisAvailable: boolean = await (async () => {
  const client = createClient({ url: redisUrl, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    await client.close();
    return true;
  } catch {
    if (process.env.CI === 'true') throw new Error(`Redis is required in CI: ${redisUrl} did not answer`);
    console.warn(`Redis tests skipped: ${redisUrl} did not answer (set TEST_REDIS_URL)`);
    return false;
  }
})();

/** A key prefix of its own, so tests sharing the machine's Redis never see each other's keys. */
export const freshRedisPrefix = () => `assistant-test-${crypto.randomUUID()}:`;
