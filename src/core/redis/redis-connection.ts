import type { createClient } from 'redis';
import type { Logger } from '../logger.js';

function newClient(create: typeof createClient, url: string) {
  return create({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2000, reconnectStrategy: (attempt: number) => Math.min(100 * 2 ** attempt, 2000) },
  });
}

export type RedisClient = ReturnType<typeof newClient>;

export interface RedisConnection {
  client: RedisClient;
  /** REDIS_KEY_PREFIX: every key this service writes starts with it. */
  keyPrefix: string;
  /** Whether commands can be sent now (for /api/status). */
  ready(): boolean;
  /** Resolves true once connected, or false after `timeoutMs` (start-up work that can wait a little). */
  waitUntilReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * The shared Redis of REDIS_URL. The service starts and serves while Redis is down: the client
 * reconnects in the background (backing off to 2 s), and commands sent meanwhile fail at once
 * instead of queueing, so each user of Redis decides how to carry on without it.
 */
export async function connectRedis(url: string, keyPrefix: string, logger: Logger): Promise<RedisConnection> {
  // Loaded only with REDIS_URL: a single instance never needs the client (~9 MB of idle memory).
  const { createClient: create } = await import('redis');
  const client = newClient(create, url);
  let wasReady = false;
  let everReady = false;
  let warnedAtStart = false;
  client.on('ready', () => {
    wasReady = true;
    everReady = true;
    logger.info('redis connected');
  });
  // Without an `error` listener the client's errors would crash the process; a down Redis is
  // reported once per outage, not once per reconnect attempt.
  client.on('error', (error: unknown) => {
    if (!everReady) {
      // Unreachable from the start: said at once, naming the setting, rather than at the first
      // request that needs it; the service starts anyway and keeps trying.
      if (warnedAtStart) return;
      warnedAtStart = true;
      logger.warn({ reason: errorReason(error) }, `REDIS_URL: Redis at ${redisAddress(url)} cannot be reached; the service starts without it and keeps trying (shared rate limits, events across instances and stream replay wait for it)`);
      return;
    }
    if (!wasReady) return;
    wasReady = false;
    logger.warn({ err: error }, 'redis unreachable; reconnecting');
  });
  client.connect().catch(() => undefined);
  return {
    client,
    keyPrefix,
    ready: () => client.isReady,
    waitUntilReady: (timeoutMs) =>
      client.isReady
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const onReady = () => {
              clearTimeout(timer);
              resolve(true);
            };
            const timer = setTimeout(() => {
              client.off('ready', onReady);
              resolve(false);
            }, timeoutMs);
            client.once('ready', onReady);
          }),
    async close() {
      // A connected client finishes its replies first; one still reconnecting just stops.
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    },
  };
}

/** host:port of a Redis URL, without its credentials. */
function redisAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '6379'}`;
  } catch {
    return 'REDIS_URL';
  }
}

/** A connection error's code (or first line), without a stack: the warning is one line. */
function errorReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const first = error instanceof AggregateError ? (error.errors[0] as unknown) : error;
  const inner = (first as { code?: unknown } | null)?.code;
  if (typeof inner === 'string') return inner;
  return (error instanceof Error ? error.message : String(error)).split('\n', 1)[0] ?? '';
}
