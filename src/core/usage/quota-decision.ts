// The reservation rule of CONTRACT §13, as a pure function. The database books run it inside a
// per-user lock; the Redis book runs the same rule in Lua (redis-quota-script.ts), and a test
// holds the two to each other.
import { quotaWindows, type QuotaMetric, type QuotaWindow } from './policy-document.js';

/** What one window's settled calls used. Costs in micro-dollars. */
export interface WindowUse {
  tokens: number;
  costMicros: number;
  requests: number;
}

/** What the user's running calls hold. */
export interface HeldUse {
  tokens: number;
  costMicros: number;
  count: number;
}

/** One limit, costs in micro-dollars. */
export interface LimitRow {
  window: QuotaWindow;
  metric: QuotaMetric;
  /** tokens, requests, or micro-dollars for costUsd. */
  limit: number;
}

export interface ReservationAsk {
  /** The prompt's worst case in tokens. */
  inputTokens: number;
  /** The most output the call may produce when nothing limits it further. */
  outputLimit: number;
  /** Micro-dollars per token; null when the model has no price. */
  price: { input: number; output: number } | null;
}

export type Decision =
  | { ok: true; outputTokens: number; tokens: number; costMicros: number }
  | { ok: false; limit: LimitRow; used: number; reason: 'exhausted' | 'unpriced' };

function costOf(price: ReservationAsk['price'], input: number, output: number): number {
  return price === null ? 0 : Math.ceil(input * price.input + output * price.output);
}

type Refused = Extract<Decision, { ok: false }>;

/** How long a refusal holds: a model without a price never passes a cost quota; windows nest. */
function lasting(refusal: Refused): number {
  return (refusal.reason === 'unpriced' ? 10 : 0) + quotaWindows.indexOf(refusal.limit.window);
}

/**
 * Of two refusals, the one that lasts longest: when asking again can first succeed, and what
 * Retry-After must say (a minute's limit spent as well as the day's is no reason to retry in a minute).
 */
function lastingOf(kept: Refused | null, found: Refused): Refused {
  if (kept === null) return found;
  return lasting(found) > lasting(kept) ? found : kept;
}

/**
 * Admits a call when every limit still has room for one more request, for its whole prompt and
 * at least one output token; the output limit is then cut to what every token and cost limit has
 * left, so a call that settles within its reservation can never take a limit past its value.
 * Refused, it names the limit that holds longest (lastingOf).
 */
export function decideReservation(limits: readonly LimitRow[], used: ReadonlyMap<QuotaWindow, WindowUse>, held: HeldUse, ask: ReservationAsk): Decision {
  let output = ask.outputLimit;
  let refused: Refused | null = null;
  for (const row of limits) {
    const settled = used.get(row.window) ?? { tokens: 0, costMicros: 0, requests: 0 };
    let refusal: Refused | null = null;
    if (row.metric === 'requests') {
      const taken = settled.requests + held.count;
      if (taken + 1 > row.limit) refusal = { ok: false, limit: row, used: taken, reason: 'exhausted' };
    } else if (row.metric === 'tokens') {
      const taken = settled.tokens + held.tokens;
      const left = row.limit - taken - ask.inputTokens;
      if (left < 1) refusal = { ok: false, limit: row, used: taken, reason: 'exhausted' };
      else output = Math.min(output, left);
    } else {
      const taken = settled.costMicros + held.costMicros;
      if (ask.price === null) refusal = { ok: false, limit: row, used: taken, reason: 'unpriced' };
      else {
        const left = row.limit - taken - costOf(ask.price, ask.inputTokens, 0);
        if (left < Math.max(ask.price.output, 1)) refusal = { ok: false, limit: row, used: taken, reason: 'exhausted' };
        else if (ask.price.output > 0) output = Math.min(output, Math.floor(left / ask.price.output));
      }
    }
    if (refusal !== null) refused = lastingOf(refused, refusal);
  }
  if (refused !== null) return refused;
  output = Math.max(1, output);
  return { ok: true, outputTokens: output, tokens: ask.inputTokens + output, costMicros: costOf(ask.price, ask.inputTokens, output) };
}
