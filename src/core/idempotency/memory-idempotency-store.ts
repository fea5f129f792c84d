import { newId } from '../ids.js';
import type { Claim, IdempotencyStore, KeptAnswer } from './idempotency-store.js';

interface Entry {
  fingerprint: string;
  token: string;
  answer?: KeptAnswer;
  expiry: NodeJS.Timeout;
}

/**
 * Past this many keys the oldest answered ones are forgotten before their time, so a client
 * sending a new key with every request cannot grow the process without bound (a forgotten key
 * only means its repeat runs again).
 */
const MAX_ENTRIES = 10_000;

/** A single instance's keys (no REDIS_URL). */
export class MemoryIdempotencyStore implements IdempotencyStore {
  /** In the order they were claimed, oldest first. */
  private readonly entries = new Map<string, Entry>();
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly runningTtlMs: number) {}

  claim(scope: string, fingerprint: string): Promise<Claim> {
    const entry = this.entries.get(scope);
    if (entry) {
      if (entry.fingerprint !== fingerprint) return Promise.resolve({ kind: 'reused' });
      return Promise.resolve(entry.answer ? { kind: 'answered', answer: entry.answer } : { kind: 'running', seen: entry.token });
    }
    const token = newId();
    this.entries.set(scope, { fingerprint, token, expiry: this.expireIn(scope, token, this.runningTtlMs) });
    this.evictOverflow();
    return Promise.resolve({ kind: 'claimed', token });
  }

  keep(scope: string, token: string, ttlMs: number): Promise<void> {
    this.reschedule(scope, token, ttlMs);
    return Promise.resolve();
  }

  answer(scope: string, token: string, answer: KeptAnswer, ttlMs: number): Promise<void> {
    const entry = this.owned(scope, token);
    if (entry) {
      entry.answer = answer;
      this.reschedule(scope, token, ttlMs);
      this.wake(scope);
    }
    return Promise.resolve();
  }

  expireAnswer(scope: string, token: string, ttlMs: number): Promise<void> {
    this.reschedule(scope, token, ttlMs);
    return Promise.resolve();
  }

  release(scope: string, token: string): Promise<void> {
    const entry = this.owned(scope, token);
    if (entry) this.forget(scope, entry);
    return Promise.resolve();
  }

  changed(scope: string, seen: string, signal?: AbortSignal): Promise<void> {
    // Answered or gone between the claim that saw it running and now: a wake-up already missed.
    const entry = this.entries.get(scope);
    if (entry?.token !== seen || entry.answer !== undefined) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.waiters.get(scope);
      if (!set) this.waiters.set(scope, (set = new Set()));
      const waiters = set;
      const done = () => {
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(scope) === waiters) this.waiters.delete(scope);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private owned(scope: string, token: string): Entry | undefined {
    const entry = this.entries.get(scope);
    return entry?.token === token ? entry : undefined;
  }

  private reschedule(scope: string, token: string, ttlMs: number): void {
    const entry = this.owned(scope, token);
    if (!entry) return;
    clearTimeout(entry.expiry);
    entry.expiry = this.expireIn(scope, token, ttlMs);
  }

  private expireIn(scope: string, token: string, ttlMs: number): NodeJS.Timeout {
    return setTimeout(
      () => {
        const entry = this.owned(scope, token);
        if (entry) this.forget(scope, entry);
      },
      Math.max(1, ttlMs),
    ).unref();
  }

  private forget(scope: string, entry: Entry): void {
    clearTimeout(entry.expiry);
    this.entries.delete(scope);
    this.wake(scope);
  }

  private evictOverflow(): void {
    if (this.entries.size <= MAX_ENTRIES) return;
    for (const [scope, entry] of this.entries) {
      if (entry.answer) {
        this.forget(scope, entry);
        return;
      }
    }
  }

  private wake(scope: string): void {
    for (const wake of [...(this.waiters.get(scope) ?? [])]) wake();
  }
}
