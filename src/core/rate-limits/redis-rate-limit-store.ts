import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { RedisClient } from '../redis/redis-connection.js';
import { withTimeout } from '../redis/redis-timeout.js';

// One fixed window per key: the first hit starts it with the window's expiry, later hits count
// up. Sent as EVAL every time rather than a cached script's SHA: a script cache lost to a Redis
// restart (or never filled because Redis was down at start-up) then cannot break counting.
const incrementScript = `
local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { hits, ttl }
`;

/**
 * express-rate-limit counters in Redis (CONTRACT §9: shared between instances). A failing command
 * throws, as does one unanswered for 500 ms; the limiter then lets the request through
 * (`passOnStoreError`) rather than refuse everyone while Redis is down or stalled.
 */
/** A Redis that accepts connections but stalls must not hold requests: past this the request passes. */
const commandTimeoutMs = 500;

export class RedisRateLimitStore implements Store {
  readonly localKeys = false;
  private windowMs = 60_000;

  constructor(
    private readonly client: RedisClient,
    readonly prefix: string,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const reply = await this.send(['EVAL', incrementScript, '1', this.prefix + key, String(this.windowMs)]);
    const [hits, ttl] = Array.isArray(reply) ? reply.map(Number) : [];
    if (hits === undefined || ttl === undefined || !Number.isFinite(hits) || !Number.isFinite(ttl)) {
      throw new TypeError('unexpected reply from Redis to the rate-limit script');
    }
    return { totalHits: hits, resetTime: new Date(Date.now() + ttl) };
  }

  async decrement(key: string): Promise<void> {
    await this.send(['DECR', this.prefix + key]);
  }

  async resetKey(key: string): Promise<void> {
    await this.send(['DEL', this.prefix + key]);
  }

  private send(command: string[]): Promise<unknown> {
    return withTimeout(this.client.sendCommand(command), commandTimeoutMs);
  }
}
