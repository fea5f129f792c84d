import { riskOrder, type RiskLevel } from './risk-levels.js';

export interface RiskVerdict {
  level: RiskLevel;
  /** Unique, most severe first, never empty. */
  reasons: string[];
}

/** The reasons gathered while walking a command line, each kept at the highest level it was raised at. */
export class Findings {
  private readonly levels = new Map<string, RiskLevel>();

  add(level: RiskLevel, reason: string): void {
    const previous = this.levels.get(reason);
    if (previous === undefined || riskOrder(level, previous) > 0) this.levels.set(reason, level);
  }

  verdict(): RiskVerdict {
    const entries = [...this.levels.entries()];
    if (entries.length === 0) return { level: 'low', reasons: ['nothing to run'] };
    // Array.prototype.sort is stable, so reasons of one level keep the order they were found in.
    entries.sort(([, a], [, b]) => riskOrder(b, a));
    const [first] = entries;
    return { level: first ? first[1] : 'low', reasons: entries.map(([reason]) => reason) };
  }
}
