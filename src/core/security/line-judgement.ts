import { analyzeCommand, type AnalysisContext, type RiskVerdict } from './risk-analysis.js';

/** What the analysis thread is asked: a line and where it runs (plain data, it crosses threads). */
export interface JudgementRequest {
  command: string;
  context: Omit<AnalysisContext, 'resolvePath'>;
}

export interface Judgement {
  verdict: RiskVerdict;
}

/** Judges one command line (CONTRACT §4, §11). */
export function judgeLine(request: JudgementRequest): Judgement {
  return { verdict: analyzeCommand(request.command, request.context) };
}
