import type { ProviderName } from '../config/env-schema.js';
import type { QuotaWindow } from './policy-document.js';
import type { LimitRow, ReservationAsk } from './quota-decision.js';

export interface LeaseAsk {
  userId: string;
  provider: ProviderName;
  model: string;
  limits: readonly LimitRow[];
  ask: ReservationAsk;
  /** The prompt's worst case in tokens (token-estimate.ts): what crash recovery charges for the input. */
  inputEstimate: number;
  conversationId: string | null;
  answerId: string | null;
  startedAt: number;
}

/** A running call's reservation. */
export interface Lease {
  id: string;
  userId: string;
  startedAt: number;
  /** The output the call may produce: sent to the provider as max_tokens / num_predict. */
  outputTokens: number;
  tokens: number;
  costMicros: number;
}

export interface Refusal {
  limit: LimitRow;
  used: number;
  reason: 'exhausted' | 'unpriced';
}

/** What a finished call used, as the ledger records it. */
export interface CallUsage {
  userId: string;
  provider: ProviderName;
  model: string;
  inputTokens: number;
  outputTokens: number;
  estimated: boolean;
  costMicros: number | null;
  outcome: 'completed' | 'aborted' | 'failed' | 'recovered';
  conversationId: string | null;
  startedAt: number;
}

/**
 * Where reservations are held (CONTRACT §13): Redis with REDIS_URL, the database otherwise.
 * Either way the database's ledger is the record, and each call's usage is written there once.
 */
export interface QuotaBook {
  reserve(ask: LeaseAsk): Promise<{ ok: true; lease: Lease } | { ok: false; refusal: Refusal }>;
  /** Ends calls: each one's lease (if any) is released and its usage recorded, in one step. */
  settle(calls: readonly SettledCall[]): Promise<void>;
  /** Keeps this instance's running leases alive. */
  renew(leases: readonly Lease[], expiresAt: number): Promise<void>;
  /** Lets go of what the book holds open (a connection of its own). */
  close?(): Promise<void>;
  /** Settles leases whose instance stopped renewing them (crash recovery); returns how many. */
  sweep(now: number): Promise<number>;
  /** What the user's settled calls and running reservations hold now, per window (GET /api/usage/limits). */
  standing(userId: string, now: number): Promise<{ used: Map<QuotaWindow, { tokens: number; costMicros: number; requests: number }>; held: { tokens: number; costMicros: number; count: number } }>;
}

export interface SettledCall {
  lease: Lease | null;
  usage: CallUsage;
}

export interface QuotaBookOptions {
  /** This instance: its leases are the ones it renews. */
  instance: string;
  /** A lease not renewed for this long has lapsed (its instance is gone). */
  leaseMs: number;
  /** A recovered call's cost at today's prices. */
  costOf(provider: ProviderName, model: string, inputTokens: number, outputTokens: number): number | null;
}
