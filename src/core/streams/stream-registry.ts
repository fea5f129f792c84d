import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import { isId, newId } from '../ids.js';
import { StreamJob } from './stream-job.js';

export interface StreamRegistryOptions {
  /** MAX_STREAMS_PER_USER: running generations per user, on any path or transport. */
  maxPerUser: number;
  /** STREAM_RETENTION_MS: how long a finished stream can still be replayed or "aborted". */
  retentionMs: number;
}

/** This instance's generations, running and recently finished. */
export class StreamRegistry {
  private readonly jobs = new Map<string, StreamJob>();
  private readonly expiries = new Map<string, NodeJS.Timeout>();
  private stopping = false;

  constructor(private readonly options: StreamRegistryOptions) {}

  /** A new running job for the user, or 429 with `details.cap` when the user already runs the most allowed. */
  open(ownerId: string, provider: ProviderName): StreamJob {
    if (this.stopping) throw new AppError('SERVICE_UNAVAILABLE', 'The service is stopping');
    const cap = this.options.maxPerUser;
    if (this.runningFor(ownerId).length >= cap) {
      throw new AppError('RATE_LIMIT_EXCEEDED', `At most ${cap} running streams per user; wait for one to finish or abort it`, {
        details: { cap },
      });
    }
    const job = new StreamJob(newId(), ownerId, provider);
    this.jobs.set(job.id, job);
    void job.finished().then(() => {
      this.scheduleExpiry(job);
    });
    return job;
  }

  /** Forgets a job that never became visible (it failed before its provider answered). */
  drop(job: StreamJob): void {
    job.discard();
    this.forget(job.id);
  }

  /** The user's stream; another user's, an unknown, an expired or a malformed id are all 404. */
  require(ownerId: string, id: string): StreamJob {
    const job = isId(id) ? this.jobs.get(id) : undefined;
    if (job?.ownerId !== ownerId) throw AppError.notFound('Stream');
    return job;
  }

  runningFor(ownerId: string): StreamJob[] {
    return [...this.jobs.values()].filter((job) => job.ownerId === ownerId && job.running);
  }

  get runningCount(): number {
    return [...this.jobs.values()].filter((job) => job.running).length;
  }

  /** SIGTERM: every running generation is aborted and stored as `aborted` before the service goes. */
  async abortAll(): Promise<void> {
    this.stopping = true;
    const running = [...this.jobs.values()].filter((job) => job.running);
    for (const job of running) job.abort('shutdown');
    await Promise.all(running.map((job) => job.finished()));
    for (const timer of this.expiries.values()) clearTimeout(timer);
    this.expiries.clear();
  }

  private scheduleExpiry(job: StreamJob): void {
    if (!this.jobs.has(job.id) || this.stopping) return;
    const timer = setTimeout(() => {
      this.forget(job.id);
    }, this.options.retentionMs);
    timer.unref();
    this.expiries.set(job.id, timer);
  }

  private forget(id: string): void {
    const timer = this.expiries.get(id);
    if (timer) clearTimeout(timer);
    this.expiries.delete(id);
    this.jobs.delete(id);
  }
}
