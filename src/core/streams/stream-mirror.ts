import { withTimeout } from '../redis/redis-timeout.js';
import type { ClusterBus } from '../cluster/cluster-bus.js';
import type { Logger } from '../logger.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import type { SequencedEvent, StreamJob } from './stream-job.js';

/** Who a mirrored stream belongs to and which instance runs it. */
export interface MirroredStreamInfo {
  instance: string;
  ownerId: string;
  provider: StreamJob['provider'];
}

/** How long a running stream's copy lives without a write; every write renews it. */
const RUNNING_TTL_MS = 60 * 60 * 1000;
/** A write that failed is tried again this often, this many times, once the stream has ended. */
const RETRY_DELAY_MS = 1000;
const FINAL_RETRIES = 5;

export const streamKeys = (prefix: string, streamId: string) => ({
  info: `${prefix}stream:${streamId}:info`,
  events: `${prefix}stream:${streamId}:events`,
});
/** Told the last sequence number each time new events of the stream are in Redis. */
export const streamChannel = (streamId: string) => `stream:${streamId}`;

/**
 * Copies this instance's generations into Redis as they run, so any instance can replay and
 * follow them (CONTRACT §6: "from any instance when REDIS_URL is set"). Each stream is a Redis
 * stream whose entry ids are the event sequence numbers, beside an info key naming its owner;
 * both expire STREAM_RETENTION_MS after `done`. The generation never waits for Redis: the copy
 * follows the job's log like any reader, one MULTI per batch of events.
 */
export class StreamMirror {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly redis: RedisConnection,
    private readonly bus: ClusterBus,
    private readonly instanceId: string,
    private readonly retentionMs: number,
    private readonly logger: Logger,
  ) {}

  track(job: StreamJob): void {
    const copying = this.copy(job).catch((error: unknown) => {
      this.logger.warn({ err: error, streamId: job.id }, 'a stream could not be copied to redis; other instances cannot replay it');
    });
    this.running.add(copying);
    void copying.finally(() => this.running.delete(copying));
  }

  /** Lets the copies still writing finish (at shutdown, before Redis closes). */
  async flush(): Promise<void> {
    await Promise.all([...this.running]);
  }

  private async copy(job: StreamJob): Promise<void> {
    const keys = streamKeys(this.redis.keyPrefix, job.id);
    const info: MirroredStreamInfo = { instance: this.instanceId, ownerId: job.ownerId, provider: job.provider };
    // Written before any event, so a replay asked of another instance right after the stream
    // became visible finds it (and waits for its events) instead of answering 404.
    await withTimeout(this.redis.client.set(keys.info, JSON.stringify(info), { expiration: { type: 'PX', value: RUNNING_TTL_MS } }));
    let unwritten: SequencedEvent[] = [];
    let failing = false;
    for await (const batch of job.followInBatches(0)) {
      unwritten.push(...batch);
      try {
        await this.write(job.id, unwritten, failing);
        unwritten = [];
        failing = false;
      } catch (error) {
        // Kept and sent with the next batch, so the copy never has a gap.
        if (!failing) this.logger.warn({ err: error, streamId: job.id }, 'copying a stream to redis failed; retrying');
        failing = true;
      }
    }
    if (job.lastSeq === 0) {
      // It ended before its provider answered: nobody ever saw it.
      await withTimeout(this.redis.client.del(keys.info));
      return;
    }
    for (let attempt = 0; unwritten.length > 0; attempt++) {
      try {
        await this.write(job.id, unwritten, true);
        unwritten = [];
      } catch (error) {
        if (attempt >= FINAL_RETRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS));
      }
    }
  }

  /** `retry`: an earlier write may have landed before it failed (a timeout), so what Redis has is skipped. */
  private async write(streamId: string, all: readonly SequencedEvent[], retry: boolean): Promise<void> {
    const keys = streamKeys(this.redis.keyPrefix, streamId);
    let events = all;
    if (retry) {
      const [newest] = (await withTimeout(this.redis.client.xRevRange(keys.events, '+', '-', { COUNT: 1 }))) ?? [];
      const written = newest ? Number(newest.id.split('-')[0]) : 0;
      events = all.filter(({ seq }) => seq > written);
    }
    const last = events.at(-1);
    if (!last) return;
    const ttl = last.event.type === 'done' ? this.retentionMs : RUNNING_TTL_MS;
    const multi = this.redis.client.multi();
    for (const { seq, event } of events) multi.xAdd(keys.events, `${seq}-0`, { e: JSON.stringify(event) });
    multi.pExpire(keys.events, ttl).pExpire(keys.info, ttl);
    await withTimeout(multi.exec());
    await this.bus.publish(streamChannel(streamId), last.seq);
  }
}
