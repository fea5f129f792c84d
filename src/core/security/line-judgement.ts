import { analyzeLine, type AnalysisContext, type RiskVerdict } from './risk-analysis.js';
import type { ShellState } from './shell-state.js';

/** What the analysis thread is asked: a line and where it runs (plain data, it crosses threads). */
export interface JudgementRequest {
  command: string;
  context: Omit<AnalysisContext, 'resolvePath'>;
}

export interface Judgement {
  verdict: RiskVerdict;
  /** The terminal's shell state once the line has run (kept only if it is sent). */
  state?: ShellState;
}

/** Judges one command line (CONTRACT §4, §11). */
export function judgeLine(request: JudgementRequest): Judgement {
  return analyzeLine(request.command, request.context);
}
