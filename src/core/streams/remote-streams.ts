import type { ChatEvent } from '../chat/chat-events.js';
import { withTimeout } from '../redis/redis-timeout.js';
import { redisUnavailable, type ClusterBus } from '../cluster/cluster-bus.js';
import type { RemoteCalls } from '../cluster/remote-calls.js';
import type { RedisConnection } from '../redis/redis-connection.js';
import { streamChannel, streamKeys, type MirroredStreamInfo } from './stream-mirror.js';
import type { FollowableStream, SequencedEvent } from './stream-job.js';

/** With no news for this long, a follower reads Redis anyway and checks that the owner lives. */
const QUIET_CHECK_MS = 2000;
/** Entries read per XRANGE; a long stream's replay comes in batches of this size. */
const PAGE = 500;

/**
 * Streams that run on another instance, read from the copy StreamMirror keeps in Redis: replay
 * from any position, then follow as the owner adds events (woken by its publish, or every two
 * seconds without one), until `done`. If the owner dies before its `done`, the follower gets an
 * `error` event instead of waiting for ever; asked for what follows `done`, it ends at once.
 */
export class RemoteStreams {
  constructor(
    private readonly redis: RedisConnection,
    private readonly bus: ClusterBus,
    private readonly calls: RemoteCalls,
  ) {}

  /** Who owns the stream and where it runs, or null when Redis knows no such stream. */
  async info(streamId: string): Promise<MirroredStreamInfo | null> {
    let raw: string | null;
    try {
      raw = await withTimeout(this.redis.client.get(streamKeys(this.redis.keyPrefix, streamId).info));
    } catch (error) {
      throw redisUnavailable('streams of other instances cannot be read', error);
    }
    return raw === null ? null : (JSON.parse(raw) as MirroredStreamInfo);
  }

  /** The user's stream from another instance, or null (unknown, expired, or someone else's). */
  async find(ownerId: string, streamId: string): Promise<FollowableStream | null> {
    const info = await this.info(streamId);
    if (info?.ownerId !== ownerId) return null;
    const followInBatches = (after: number, signal?: AbortSignal) => this.followInBatches(streamId, info.instance, after, signal);
    return {
      id: streamId,
      ownerId: info.ownerId,
      provider: info.provider,
      followInBatches,
      async *follow(after, signal) {
        for await (const batch of followInBatches(after, signal)) yield* batch;
      },
      doneSeq: () => this.doneSeq(streamId),
    };
  }

  /** The sequence number of the copy's `done`, or null while it runs. */
  private async doneSeq(streamId: string): Promise<number | null> {
    const key = streamKeys(this.redis.keyPrefix, streamId).events;
    const newest = await withTimeout(this.redis.client.xRevRange(key, '+', '-', { COUNT: 1 })).catch((error: unknown) => {
      throw redisUnavailable('streams of other instances cannot be read', error);
    });
    const last = newest?.[0];
    if (last === undefined || (JSON.parse(String(last.message.e)) as ChatEvent).type !== 'done') return null;
    return Number(last.id.split('-')[0]);
  }

  private async *followInBatches(streamId: string, instance: string, after: number, signal?: AbortSignal): AsyncGenerator<readonly SequencedEvent[]> {
    let wake: (() => void) | null = null;
    // Counts the owner's publishes, so one that lands while Redis is being read is not missed.
    let published = 0;
    // Without the subscription (Redis just reconnecting) the follower still reads every two seconds.
    const unsubscribe = await this.bus.subscribe(streamChannel(streamId), () => {
      published++;
      wake?.();
    });
    try {
      let next = Math.max(0, after);
      let ownerGone = false;
      for (;;) {
        const publishedBefore = published;
        const batch = await this.read(streamId, next);
        if (batch.length > 0) {
          yield batch;
          const last = batch[batch.length - 1] as SequencedEvent;
          next = last.seq;
          if (last.event.type === 'done') return;
          continue;
        }
        if (ownerGone) {
          const gone: ChatEvent = { type: 'error', code: 'SERVICE_UNAVAILABLE', message: 'The instance running this generation has stopped' };
          yield [{ seq: next + 1, event: gone }];
          return;
        }
        if (signal?.aborted) return;
        if (published !== publishedBefore) continue;
        // Asked for what comes after its `done`, or its copy expired: nothing more will come (a
        // local job ends there too). Events written since the read above are read first.
        const state = await this.copyState(streamId, next);
        if (state === 'ended') return;
        if (state === 'behind') continue;
        if (await this.quietWait((waker) => (wake = waker), signal)) continue;
        // Found gone, the owner gets one more read: it may have written its end just before.
        if (!(await this.calls.listening(instance).catch(() => true))) ownerGone = true;
      }
    } finally {
      await unsubscribe();
    }
  }

  /** Resolves true when woken (new events or the reader left), false after QUIET_CHECK_MS of silence. */
  private quietWait(setWaker: (waker: (() => void) | null) => void, signal?: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const finish = (value: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        setWaker(null);
        resolve(value);
      };
      const onAbort = () => {
        finish(true);
      };
      const timer = setTimeout(() => {
        finish(false);
      }, QUIET_CHECK_MS);
      setWaker(onAbort);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * `ended`: the copy is gone, or ends in a `done` the reader (at `next`) has had. `behind`: the
   * copy has events after `next` (written since the last read). Else `running`; a Redis that
   * cannot tell counts as running.
   */
  private async copyState(streamId: string, next: number): Promise<'ended' | 'behind' | 'running'> {
    const keys = streamKeys(this.redis.keyPrefix, streamId);
    try {
      const [exists, newest] = await Promise.all([
        withTimeout(this.redis.client.exists(keys.info)),
        withTimeout(this.redis.client.xRevRange(keys.events, '+', '-', { COUNT: 1 })),
      ]);
      if (exists === 0) return 'ended';
      const last = newest?.[0];
      if (last === undefined) return 'running';
      if (Number(last.id.split('-')[0]) > next) return 'behind';
      return (JSON.parse(String(last.message.e)) as ChatEvent).type === 'done' ? 'ended' : 'running';
    } catch {
      return 'running';
    }
  }

  private async read(streamId: string, after: number): Promise<SequencedEvent[]> {
    const key = streamKeys(this.redis.keyPrefix, streamId).events;
    const entries = await withTimeout(this.redis.client.xRange(key, `(${after}-0`, '+', { COUNT: PAGE })).catch((error: unknown) => {
      throw redisUnavailable('streams of other instances cannot be read', error);
    });
    return (entries ?? []).map((entry) => ({
      seq: Number(entry.id.split('-')[0]),
      event: JSON.parse(String(entry.message.e)) as ChatEvent,
    }));
  }
}
