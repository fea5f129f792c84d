/**
 * What one request learns of what its generation stored before the provider answered. A request
 * with an Idempotency-Key whose attempt fails in a way its client retries (429, 503) takes it back
 * and frees its key, so the retry runs and the exchange is stored once (CONTRACT §12).
 */
export interface ChatAttempt {
  /** Told once the question (or the caller's transcript) is stored, with how to take it back. */
  stored(forget: () => Promise<void>): void;
}
