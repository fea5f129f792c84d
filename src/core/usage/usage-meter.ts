import type { User } from '../auth/permissions.js';
import type { ProviderName } from '../config/env-schema.js';
import { AppError } from '../errors/app-error.js';
import type { Logger } from '../logger.js';
import type { ChatCall, StepUsage } from '../providers/chat-protocol.js';
import type { EffectiveLimit } from './effective-limits.js';
import { costMicros, priceOf, type ModelPrices } from './model-prices.js';
import type { PolicyBook } from './policy-book.js';
import type { CallUsage, Lease, QuotaBook, Refusal, SettledCall } from './quota-book.js';
import type { LimitRow } from './quota-decision.js';
import { periodEnd } from './quota-periods.js';
import { purgeOldTotals } from './usage-ledger.js';
import type { UsageSql } from './usage-sql.js';
import { SettleTiming } from './settle-timing.js';
import { worstCaseInputTokens, worstCaseOutputTokens } from './token-estimate.js';

/**
 * How long ended calls that hold no reservation wait to be settled together (settle-timing.ts);
 * a report sees such a call this much later.
 */
const SETTLE_DELAY_MS = 20;
/** How often old per-period totals are dropped. */
const PURGE_EVERY_MS = 3_600_000;

export interface MeterOptions {
  /** The output reserved (and sent as max_tokens) when the caller sets none and a token or cost limit holds. */
  outputTokens: number;
  leaseMs: number;
  /** Where old per-period totals are dropped from. */
  sql: UsageSql;
}

export interface CallPlan {
  user: User;
  provider: ProviderName;
  model: string;
  call: Pick<ChatCall, 'system' | 'messages' | 'tools' | 'options'>;
  /** What the caller asked for, if anything. */
  maxTokens: number | undefined;
  conversationId: string | null;
  answerId: string | null;
}

/** How one provider call ended, as the meter settles it. */
export interface CallEnd {
  /** The provider's count; null when it gave none (the call failed or was cut off). */
  usage: StepUsage | null;
  /** The text it produced, for the estimate when the provider gave no count. */
  text: string;
  outcome: CallUsage['outcome'];
}

export interface MeteredCall {
  /** The call's max_tokens: the caller's, or what the reservation allows, or undefined (nothing limits it). */
  maxTokens: number | undefined;
  end(end: CallEnd): void;
}

/** The ledger's columns hold 32-bit counts; no single call comes near. */
const MAX_CALL_TOKENS = 2_147_483_647;

/**
 * A provider's count as the ledger records it: a whole number of tokens (a fraction rounded up),
 * at most the column's limit; null when it is no count at all (negative, not finite).
 */
function tokenCount(value: number): number | null {
  if (!Number.isFinite(value) || value < 0) return null;
  return Math.min(Math.ceil(value), MAX_CALL_TOKENS);
}

function asLimitRow(limit: EffectiveLimit): LimitRow {
  return { window: limit.window, metric: limit.metric, limit: limit.metric === 'costUsd' ? Math.round(limit.limit * 1_000_000) : limit.limit };
}

function shown(metric: LimitRow['metric'], value: number): number {
  return metric === 'costUsd' ? value / 1_000_000 : value;
}

const unitOf = { tokens: 'tokens', requests: 'requests', costUsd: 'USD' } as const;

/** CONTRACT §13's refusal: 429 with details.quota and Retry-After; 403 for a model a cost quota cannot price. */
export function quotaRefusal(refusal: Refusal, model: string, now: number): AppError {
  const { limit } = refusal;
  const resetAt = periodEnd(limit.window, now);
  const quota = { window: limit.window, metric: limit.metric, limit: shown(limit.metric, limit.limit), used: shown(limit.metric, refusal.used), resetAt: new Date(resetAt).toISOString() };
  if (refusal.reason === 'unpriced') {
    return new AppError('FORBIDDEN', `The model ${model} has no price (MODEL_PRICES), and a cost quota holds you`, { details: { quota, model } });
  }
  const retryAfter = Math.max(1, Math.ceil((resetAt - now) / 1000));
  return new AppError('RATE_LIMIT_EXCEEDED', `Quota reached: ${quota.limit} ${unitOf[limit.metric]} a ${limit.window}; it resets at ${quota.resetAt}`, {
    details: { quota },
    headers: { 'Retry-After': String(retryAfter) },
  });
}

/**
 * Every provider call passes here (CONTRACT §13): before it, the caller's quotas are checked and
 * its worst case reserved; after it, the reservation is settled to what it really used and the
 * ledger records the call. Settling runs in the background (tracked, awaited at shutdown) so the
 * answer's end waits for no write. Running leases are renewed, and lapsed ones (another
 * instance's, after a crash) settled, by one timer.
 */
export class UsageMeter {
  private readonly live = new Map<string, Lease>();
  private readonly settling = new Set<Promise<void>>();
  /** Calls ended and not yet settled. */
  private readonly queue: SettledCall[] = [];
  private readonly timing = new SettleTiming(SETTLE_DELAY_MS);
  private readonly timer: NodeJS.Timeout;
  private purgedAt = 0;

  constructor(
    private readonly book: QuotaBook,
    private readonly policies: PolicyBook,
    private readonly prices: ModelPrices,
    private readonly options: MeterOptions,
    private readonly logger: Logger,
  ) {
    this.timer = setInterval(() => {
      void this.tend();
    }, Math.max(250, Math.floor(options.leaseMs / 3)));
    this.timer.unref();
  }

  async begin(plan: CallPlan): Promise<MeteredCall> {
    const startedAt = Date.now();
    const limits = this.policies.limitsFor(plan.user).map(asLimitRow);
    // Walking the prompt costs time on a long history: only a reservation, or a provider that
    // reports no count, needs the prompt's worst case (token-estimate.ts), and then once.
    let inputWorstCase: number | undefined;
    const estimate = () => (inputWorstCase ??= worstCaseInputTokens(plan.call));
    const price = priceOf(this.prices, plan.provider, plan.model);
    let lease: Lease | null = null;
    let maxTokens = plan.maxTokens;
    if (limits.length > 0) {
      const sized = limits.some((row) => row.metric !== 'requests');
      const reply = await this.book.reserve({
        userId: plan.user.id,
        provider: plan.provider,
        model: plan.model,
        limits,
        ask: { inputTokens: estimate(), outputLimit: plan.maxTokens ?? this.options.outputTokens, price },
        inputEstimate: estimate(),
        conversationId: plan.conversationId,
        answerId: plan.answerId,
        startedAt,
      });
      if (!reply.ok) throw quotaRefusal(reply.refusal, `${plan.provider}/${plan.model}`, startedAt);
      lease = reply.lease;
      this.live.set(lease.id, lease);
      // Only a token or cost limit needs the output bounded; a request limit alone leaves it as asked.
      if (sized) maxTokens = lease.outputTokens;
    }
    let ended = false;
    return {
      maxTokens,
      end: (end) => {
        if (ended) return;
        ended = true;
        this.queue.push({ lease, usage: this.usageOf(plan, end, { input: estimate, outputLimit: maxTokens }, price, startedAt) });
        const turn = this.timing.next(lease !== null);
        if (turn) this.track(this.settleAt(turn));
      },
    };
  }

  private usageOf(
    plan: CallPlan,
    end: CallEnd,
    worstCase: { input: () => number; outputLimit: number | undefined },
    price: ReturnType<typeof priceOf>,
    startedAt: number,
  ): CallUsage {
    // A provider that reported nothing (or zeros: no model reads a prompt for free), or counts
    // that are no counts (negative ones would hand a quota back), is estimated.
    const given = end.usage === null ? null : { input: tokenCount(end.usage.inputTokens), output: tokenCount(end.usage.outputTokens) };
    const reported = given !== null && given.input !== null && given.output !== null && (given.input > 0 || given.output > 0);
    const inputTokens = reported ? (given.input ?? 0) : worstCase.input();
    const outputTokens = reported ? (given.output ?? 0) : worstCaseOutputTokens(end.text, worstCase.outputLimit);
    return {
      userId: plan.user.id,
      provider: plan.provider,
      model: plan.model,
      inputTokens,
      outputTokens,
      estimated: !reported,
      costMicros: costMicros(price, inputTokens, outputTokens),
      outcome: end.outcome,
      conversationId: plan.conversationId,
      startedAt,
    };
  }

  /** Settles every call ended by `turn` in one transaction: one commit for many calls, not one each. */
  private async settleAt(turn: Promise<void>): Promise<void> {
    await turn;
    const calls = this.queue.splice(0);
    try {
      await this.book.settle(calls);
    } catch (error) {
      // The leases, if any, lapse and are settled as recovered by the sweep.
      this.logger.error({ err: error, calls: calls.length }, 'recording provider calls in the usage ledger failed');
    } finally {
      for (const { lease } of calls) if (lease) this.live.delete(lease.id);
    }
  }

  private track(work: Promise<void>): void {
    this.settling.add(work);
    void work.finally(() => this.settling.delete(work));
  }

  /** Renews this instance's running leases and settles lapsed ones. */
  private async tend(): Promise<void> {
    try {
      await this.book.renew([...this.live.values()], Date.now() + this.options.leaseMs);
      const swept = await this.book.sweep(Date.now());
      if (swept > 0) this.logger.warn({ swept }, 'settled reservations whose instance stopped renewing them');
      if (Date.now() - this.purgedAt > PURGE_EVERY_MS) {
        this.purgedAt = Date.now();
        await purgeOldTotals(this.options.sql.query, this.purgedAt);
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'tending quota reservations failed; retrying');
    }
  }

  /** Settles lapsed leases now (at start-up). */
  async recover(): Promise<void> {
    await this.tend();
  }

  /** Resolves once every settle under way (and any they started meanwhile) is written. */
  async settled(): Promise<void> {
    while (this.settling.size > 0) await Promise.all([...this.settling]);
  }

  /** Waits for every settle under way, and stops the timer. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.settled();
    await this.book.close?.();
  }

  /** The caller's limits with what is used and left (GET /api/usage/limits). */
  async standing(user: User) {
    const now = Date.now();
    const limits = this.policies.limitsFor(user).map(asLimitRow);
    const { used, held } = await this.book.standing(user.id, now);
    return limits.map((row) => {
      const settled = used.get(row.window) ?? { tokens: 0, costMicros: 0, requests: 0 };
      const taken = row.metric === 'requests' ? settled.requests + held.count : row.metric === 'tokens' ? settled.tokens + held.tokens : settled.costMicros + held.costMicros;
      return {
        window: row.window,
        metric: row.metric,
        limit: shown(row.metric, row.limit),
        used: shown(row.metric, taken),
        remaining: shown(row.metric, Math.max(0, row.limit - taken)),
        resetAt: new Date(periodEnd(row.window, now)).toISOString(),
      };
    });
  }
}
