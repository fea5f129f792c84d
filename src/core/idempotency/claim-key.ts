import { AppError } from '../errors/app-error.js';
import type { IdempotencyStore, KeptAnswer } from './idempotency-store.js';

/**
 * How long a claim lives without its owner renewing it: an instance that dies mid-request frees
 * its keys this soon, so the client's retry runs instead of waiting for ever.
 */
export const RUNNING_CLAIM_TTL_MS = 30_000;
const RENEW_EVERY_MS = 10_000;

export type ClaimedKey = { kind: 'claimed'; token: string } | { kind: 'answered'; answer: KeptAnswer };

/**
 * Claims the caller's key for this request, or returns the first request's answer, waiting for
 * it while that request still runs (CONTRACT §12). A key already used for another request → 400
 * `idempotency_key_reused`. When the first request releases its key (it failed with nothing
 * stored), a waiter claims it and runs: of several concurrent retries exactly one does.
 */
export async function claimKey(store: IdempotencyStore, scope: string, fingerprint: string, signal?: AbortSignal): Promise<ClaimedKey> {
  for (;;) {
    const claim = await store.claim(scope, fingerprint);
    switch (claim.kind) {
      case 'claimed':
      case 'answered':
        return claim;
      case 'reused':
        throw AppError.invalid('This Idempotency-Key was already used for a different request', { reason: 'idempotency_key_reused' });
      case 'running':
        if (signal?.aborted) throw new AppError('SERVICE_UNAVAILABLE', 'The request was cancelled while waiting for the first one with its Idempotency-Key');
        await store.changed(scope, claim.seen, signal);
    }
  }
}

/** Renews a running claim until the returned function is called. */
export function keepClaimed(store: IdempotencyStore, scope: string, token: string, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => {
    store.keep(scope, token, RUNNING_CLAIM_TTL_MS).catch(onError);
  }, RENEW_EVERY_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
  };
}
