import { redisUnavailable, type ClusterBus } from '../cluster/cluster-bus.js';
import { newId } from '../ids.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { withTimeout } from '../redis/redis-timeout.js';
import type { Claim, IdempotencyStore, KeptAnswer } from './idempotency-store.js';

interface StoredEntry {
  /** The request's fingerprint. */
  f: string;
  /** The claim's token. */
  t: string;
  a?: KeptAnswer;
}

/** A waiter reads the entry again this often even when no instance said it changed. */
const POLL_MS = 500;

// Each changes the entry only while it is still the caller's claim: one that expired (its owner
// stalled past the running TTL) and was claimed again must not be answered or dropped by it.
const ifOwned = (action: string) => `
local value = redis.call('GET', KEYS[1])
if value and cjson.decode(value).t == ARGV[1] then ${action} end
return 0`;
const KEEP = ifOwned(`return redis.call('PEXPIRE', KEYS[1], ARGV[2])`);
const ANSWER = ifOwned(`redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2]) return 1`);
const RELEASE = ifOwned(`return redis.call('DEL', KEYS[1])`);

/**
 * The keys in the shared Redis (REDIS_URL), so every instance answers a repeat the same: the
 * first request claims its key with SET NX; the instance that runs it tells waiters on the bus
 * when the entry changes. A Redis that cannot be reached is a 503 (the client retries): running
 * a keyed request without knowing whether it already ran could generate and store it twice.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  constructor(
    private readonly redis: RedisConnection,
    private readonly bus: ClusterBus,
    private readonly runningTtlMs: number,
  ) {}

  async claim(scope: string, fingerprint: string): Promise<Claim> {
    const key = this.key(scope);
    const token = newId();
    const entry: StoredEntry = { f: fingerprint, t: token };
    // An entry that expires between the SET and the GET is claimed again on the next turn.
    for (;;) {
      const set = await this.run(this.redis.client.set(key, JSON.stringify(entry), { condition: 'NX', expiration: { type: 'PX', value: this.runningTtlMs } }));
      if (set === 'OK') return { kind: 'claimed', token };
      const raw = await this.run(this.redis.client.get(key));
      if (raw === null) continue;
      const found = JSON.parse(raw) as StoredEntry;
      if (found.f !== fingerprint) return { kind: 'reused' };
      return found.a ? { kind: 'answered', answer: found.a } : { kind: 'running', seen: found.t };
    }
  }

  async keep(scope: string, token: string, ttlMs: number): Promise<void> {
    await this.script(KEEP, scope, [token, String(Math.max(1, ttlMs))]);
  }

  async answer(scope: string, token: string, answer: KeptAnswer, ttlMs: number): Promise<void> {
    const raw = await this.run(this.redis.client.get(this.key(scope)));
    if (raw === null) return;
    const entry: StoredEntry = { ...(JSON.parse(raw) as StoredEntry), a: answer };
    await this.script(ANSWER, scope, [token, String(Math.max(1, ttlMs)), JSON.stringify(entry)]);
    await this.tell(scope);
  }

  async expireAnswer(scope: string, token: string, ttlMs: number): Promise<void> {
    await this.keep(scope, token, ttlMs);
  }

  async release(scope: string, token: string): Promise<void> {
    await this.script(RELEASE, scope, [token]);
    await this.tell(scope);
  }

  async changed(scope: string, seen: string, signal?: AbortSignal): Promise<void> {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const unsubscribe = await this.bus.subscribe(this.channel(scope), () => {
      wake();
    });
    const timer = setTimeout(wake, POLL_MS);
    signal?.addEventListener('abort', wake, { once: true });
    try {
      // A change told before the subscription was made would otherwise wait for the poll.
      const raw = await this.run(this.redis.client.get(this.key(scope))).catch(() => null);
      const entry = raw === null ? null : (JSON.parse(raw) as StoredEntry);
      if (entry?.t !== seen || entry.a !== undefined) wake();
      await woken;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      await unsubscribe();
    }
  }

  private key(scope: string): string {
    return `${this.redis.keyPrefix}idempotency:${scope}`;
  }

  private channel(scope: string): string {
    return `idempotency:${scope}`;
  }

  /** Waiters poll anyway: a lost message only delays them. */
  private async tell(scope: string): Promise<void> {
    await this.bus.publish(this.channel(scope), 1).catch(() => undefined);
  }

  private async script(script: string, scope: string, args: string[]): Promise<void> {
    await this.run(this.redis.client.eval(script, { keys: [this.key(scope)], arguments: args }));
  }

  private async run<T>(command: Promise<T>): Promise<T> {
    try {
      return await withTimeout(command);
    } catch (error) {
      throw redisUnavailable('requests with an Idempotency-Key cannot be checked', error);
    }
  }
}
