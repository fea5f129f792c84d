import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import { isId, newId } from '../ids.js';
import type { RemoteStreams } from './remote-streams.js';
import { StreamJob, type FollowableStream } from './stream-job.js';

export interface StreamRegistryOptions {
  /** MAX_STREAMS_PER_USER: running generations per user, on any path or transport. */
  maxPerUser: number;
  /** STREAM_RETENTION_MS: how long a finished stream can still be replayed or "aborted". */
  retentionMs: number;
  /**
   * STREAM_REPLAY_MAX_BYTES: what finished streams may hold in memory together. Past it the
   * oldest are forgotten before their retention ends, so a sustained load cannot exhaust memory.
   */
  maxRetainedBytes: number;
  /** Told when a job finishes with its `done` (not when dropped), for live pushes. */
  onJobDone?: (job: StreamJob) => void;
  /** Told of every new job (the Redis copy for other instances starts here). */
  onJobOpened?: (job: StreamJob) => void;
  /** Streams of other instances (with REDIS_URL), for replays asked of this one. */
  remote?: RemoteStreams;
}

/** How often finished streams past their retention are forgotten. */
const SWEEP_INTERVAL_MS = 1000;

/**
 * How long a finished stream waits for the reader its transport promised (handOver) before it is
 * retained like any other: long enough for any reply to look it up, short enough that a client
 * that started a stream over /trpc and never followed it holds nothing for long.
 */
const HANDOVER_MS = 30_000;

/** This instance's generations, running and recently finished. */
export class StreamRegistry {
  private readonly jobs = new Map<string, StreamJob>();
  private readonly runningPerOwner = new Map<string, number>();
  /** Finished jobs still kept, oldest first: they finish in the order they expire. */
  private readonly finished = new Map<string, StreamJob>();
  /** Jobs whose transport will read them by id and has not yet: kept whatever the retention. */
  private readonly awaitingReader = new Set<StreamJob>();
  private retainedBytes = 0;
  private sweeper: NodeJS.Timeout | null = null;
  private stopping = false;

  constructor(private readonly options: StreamRegistryOptions) {}

  /** One function for every job, not a closure each: a job keeps it as long as it is kept. */
  private readonly jobFinished = (job: StreamJob): void => {
    this.onFinished(job);
  };

  /** A new running job for the user, or 429 with `details.cap` when the user already runs the most allowed. */
  open(ownerId: string, provider: ProviderName): StreamJob {
    if (this.stopping) throw new AppError('SERVICE_UNAVAILABLE', 'The service is stopping');
    const cap = this.options.maxPerUser;
    const running = this.runningPerOwner.get(ownerId) ?? 0;
    if (running >= cap) {
      throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${cap} running streams per user; wait for one to finish or abort it`, {
        details: { cap },
      });
    }
    const job = new StreamJob(newId(), ownerId, provider, this.jobFinished);
    this.runningPerOwner.set(ownerId, running + 1);
    this.jobs.set(job.id, job);
    this.options.onJobOpened?.(job);
    return job;
  }

  /** Forgets a job that never became visible (it failed before its provider answered). */
  drop(job: StreamJob): void {
    this.awaitingReader.delete(job);
    this.jobs.delete(job.id);
    job.discard();
  }

  /**
   * The transport that started `job` answers with it by reading it by id (after the provider's
   * 2xx, CONTRACT §6, §12). A provider that fails at once can finish the job before that read;
   * the job is then kept for it however short STREAM_RETENTION_MS or the memory budget is, so the
   * reply is still the stream and never a 404. Called in the same microtask run as the 2xx
   * resolved the launch, before any I/O could finish the job.
   */
  handOver(job: StreamJob): void {
    if (this.jobs.get(job.id) === job && job.running) this.awaitingReader.add(job);
  }

  /** The user's stream; another user's, an unknown, an expired or a malformed id are all 404. */
  require(ownerId: string, id: string): StreamJob {
    const job = isId(id) ? this.jobs.get(id) : undefined;
    if (job?.ownerId !== ownerId) throw AppError.notFound('Stream');
    if (this.awaitingReader.delete(job)) {
      // The promised first read: from here on the job is retained like any other.
      if (!job.running) this.retain(job);
      return job;
    }
    if (this.expired(job)) throw AppError.notFound('Stream');
    return job;
  }

  /** Resolves once this instance's stream has finished; at once for a stream that is not here. */
  async untilFinished(id: string): Promise<void> {
    await this.jobs.get(id)?.finished();
  }

  /** Generations running on this instance now, all users together (for the metrics). */
  get runningCount(): number {
    let count = 0;
    for (const running of this.runningPerOwner.values()) count += running;
    return count;
  }

  /** Whether the stream runs (or ran) on this instance, whoever owns it. */
  has(id: string): boolean {
    return isId(id) && this.jobs.has(id);
  }

  /**
   * The user's stream for reading, from this instance or (with REDIS_URL) another: a replay works
   * from any instance (CONTRACT §6). Unknown, expired and other users' streams are 404.
   */
  async locate(ownerId: string, id: string): Promise<FollowableStream> {
    const { remote } = this.options;
    if (this.has(id) || !remote || !isId(id)) return this.require(ownerId, id);
    const found = await remote.find(ownerId, id);
    if (!found) throw AppError.notFound('Stream');
    return found;
  }

  /** SIGTERM: every running generation is aborted and stored as `aborted` before the service goes. */
  async abortAll(): Promise<void> {
    this.stopping = true;
    const running = [...this.jobs.values()].filter((job) => job.running);
    for (const job of running) job.abort('shutdown');
    await Promise.all(running.map((job) => job.finished()));
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private onFinished(job: StreamJob): void {
    const running = (this.runningPerOwner.get(job.ownerId) ?? 1) - 1;
    if (running > 0) this.runningPerOwner.set(job.ownerId, running);
    else this.runningPerOwner.delete(job.ownerId);
    if (job.doneMetadata) this.options.onJobDone?.(job);
    // A dropped job is no longer known; a job finishing during shutdown has nobody to replay to.
    if (!this.jobs.has(job.id) || this.stopping) return;
    if (this.awaitingReader.has(job)) {
      setTimeout(() => {
        if (this.awaitingReader.delete(job)) this.retain(job);
      }, HANDOVER_MS).unref();
      return;
    }
    this.retain(job);
  }

  /** Keeps a finished job for replays, within the retention and the memory budget. */
  private retain(job: StreamJob): void {
    if (!this.jobs.has(job.id) || this.stopping) return;
    this.finished.set(job.id, job);
    this.retainedBytes += job.approximateBytes;
    while (this.retainedBytes > this.options.maxRetainedBytes && this.forgetOldest()) {
      // forgetOldest() shrinks retainedBytes.
    }
    this.sweeper ??= setInterval(() => {
      this.sweep();
    }, Math.min(SWEEP_INTERVAL_MS, Math.max(10, this.options.retentionMs))).unref();
  }

  /** Past its retention; the sweeper forgets it within a second, this answers exactly. */
  private expired(job: StreamJob): boolean {
    const finishedAt = job.finishedSince;
    return finishedAt !== null && Date.now() - finishedAt >= this.options.retentionMs;
  }

  private sweep(): void {
    for (const job of this.finished.values()) {
      if (!this.expired(job)) break;
      this.forgetOldest();
    }
    if (this.finished.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  private forgetOldest(): boolean {
    const oldest = this.finished.values().next();
    if (oldest.done) return false;
    const job = oldest.value;
    this.finished.delete(job.id);
    this.jobs.delete(job.id);
    this.retainedBytes -= job.approximateBytes;
    return true;
  }
}
