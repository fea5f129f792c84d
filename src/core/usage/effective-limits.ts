import type { Role } from '../auth/permissions.js';
import { quotaMetrics, quotaWindows, type PolicyDocument, type QuotaMetric, type QuotaRule, type QuotaWindow } from './policy-document.js';

/** One limit a user is held to; `costUsd` limits are kept in micro-dollars, as costs are counted. */
export interface EffectiveLimit {
  window: QuotaWindow;
  metric: QuotaMetric;
  /** In the metric's own unit (tokens, requests, or USD for costUsd). */
  limit: number;
}

function valueOf(rule: QuotaRule, metric: QuotaMetric): number | undefined {
  return rule[metric];
}

/**
 * The limits that hold for one user (CONTRACT §13): for each window and metric, a `userId` rule
 * naming the user decides (the most generous if several do); otherwise the most generous of the
 * user's roles, where a role with no rule for that window and metric imposes none — so one
 * unlimited role leaves the user unlimited there.
 */
export function effectiveLimits(policy: PolicyDocument, user: { id: string; roles: readonly Role[] }): EffectiveLimit[] {
  const limits: EffectiveLimit[] = [];
  for (const window of quotaWindows) {
    const inWindow = policy.quotas.filter((rule) => rule.window === window);
    if (inWindow.length === 0) continue;
    for (const metric of quotaMetrics) {
      const limit = limitFor(inWindow, metric, user);
      if (limit !== undefined) limits.push({ window, metric, limit });
    }
  }
  return limits;
}

function limitFor(rules: readonly QuotaRule[], metric: QuotaMetric, user: { id: string; roles: readonly Role[] }): number | undefined {
  const named = rules.filter((rule) => 'userId' in rule.subject && rule.subject.userId === user.id && valueOf(rule, metric) !== undefined);
  if (named.length > 0) return Math.max(...named.map((rule) => valueOf(rule, metric) ?? 0));
  let generous: number | undefined;
  for (const role of user.roles) {
    const values = rules
      .filter((rule) => 'role' in rule.subject && rule.subject.role === role)
      .map((rule) => valueOf(rule, metric))
      .filter((value): value is number => value !== undefined);
    // This role sets no limit here: the user is not limited here at all.
    if (values.length === 0) return undefined;
    const roleLimit = Math.max(...values);
    generous = generous === undefined ? roleLimit : Math.max(generous, roleLimit);
  }
  return generous;
}
