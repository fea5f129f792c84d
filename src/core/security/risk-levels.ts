export type RiskLevel = 'low' | 'medium' | 'high' | 'critical';

/** The levels from least to most severe. */
export const riskLevels: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];

const rank: Record<RiskLevel, number> = { low: 0, medium: 1, high: 2, critical: 3 };

/** Negative when `a` is less severe than `b`; usable as a sort comparator. */
export function riskOrder(a: RiskLevel, b: RiskLevel): number {
  return rank[a] - rank[b];
}

/** The more severe of the levels (low for none). */
export function maxLevel(...levels: readonly RiskLevel[]): RiskLevel {
  let highest: RiskLevel = 'low';
  for (const level of levels) if (rank[level] > rank[highest]) highest = level;
  return highest;
}
