import type { ErrorCode } from '../errors/app-error.js';

/** The first request's answer, as a repeat receives it. */
export type KeptAnswer =
  | {
      ok: true;
      /** The procedure's output (JSON). */
      data: unknown;
      /** The headers the operation itself set (X-Conversation-Id, …), not the limits' ones. */
      headers: Record<string, string>;
      status?: number;
    }
  | { ok: false; error: { code: ErrorCode; message: string; details: Record<string, unknown> } };

export type Claim =
  /** This request runs; `token` proves it when it answers or releases. */
  | { kind: 'claimed'; token: string }
  | { kind: 'answered'; answer: KeptAnswer }
  /** The first request still runs: wait for its answer (`changed` from what this saw: `seen`). */
  | { kind: 'running'; seen: string }
  /** The key was used for another request (another body or operation). */
  | { kind: 'reused' };

/**
 * The keys of CONTRACT §12's Idempotency-Key, per caller: in memory on a single instance, in Redis
 * with REDIS_URL so a retry that reaches another instance finds the first attempt. An entry is
 * claimed by the first request (kept alive while it runs), then holds its answer for
 * STREAM_RETENTION_MS, or is released so the client's retry runs.
 */
export interface IdempotencyStore {
  claim(scope: string, fingerprint: string): Promise<Claim>;
  /** Keeps a running claim from expiring (its owner is alive). */
  keep(scope: string, token: string, ttlMs: number): Promise<void>;
  /** Records the answer, kept for `ttlMs` from now. */
  answer(scope: string, token: string, answer: KeptAnswer, ttlMs: number): Promise<void>;
  /** Sets how long an answered entry is still kept (a stream's answer: retention after its end). */
  expireAnswer(scope: string, token: string, ttlMs: number): Promise<void>;
  /** Forgets the claim: the next request with the key runs. */
  release(scope: string, token: string): Promise<void>;
  /**
   * Resolves when the entry may have changed since a claim saw it `running` (answered, released,
   * expired), at once if it already has, or after a short while anyway.
   */
  changed(scope: string, seen: string, signal?: AbortSignal): Promise<void>;
}
