import { posix } from 'node:path';
import { Findings, type RiskVerdict } from './findings.js';
import { initialShellState, type ShellState } from './shell-state.js';
import { resolveRealPath } from './path-scope.js';
import { LineAnalysis } from './shell-walk.js';

export type { RiskLevel } from './risk-levels.js';
export type { RiskVerdict } from './findings.js';
export { maxLevel, riskOrder } from './risk-levels.js';

export interface AnalysisContext {
  /** Real path of the shell's current directory; null = unknown (relative paths are then unknown). */
  cwd: string | null;
  /** What `~` means. */
  home: string;
  /** Real paths of every registered workspace. */
  workspaceRoots: readonly string[];
  /**
   * WORKSPACE_RESTRICTION_ENABLED. When false, "outside the workspaces" raises nothing (reads
   * outside are not high, writes outside not critical), while removing `/`, `~`, a workspace root
   * or a parent of one, and writing to block devices, stay critical.
   */
  restrictToWorkspaces: boolean;
  /**
   * Follows symlinks in an absolute, lexically normalised path. Default: realpath of the longest
   * existing prefix plus the rest, where each `..` is applied to the already-resolved part (as the
   * kernel does).
   */
  resolvePath?: (absolutePath: string) => string;
  /** What earlier lines of this shell left behind (CONTRACT §11); a fresh shell's when absent. */
  state?: ShellState;
}

export interface LineVerdict {
  verdict: RiskVerdict;
  /** The shell's state once the line has run: kept by the terminal if the line is sent. */
  state: ShellState;
}

/**
 * The risk of running `command` in a shell at `context.cwd` (CONTRACT §4), from a real bash parse
 * of the whole line. Pure apart from resolving paths on disk.
 */
export function analyzeCommand(command: string, context: AnalysisContext): RiskVerdict {
  return analyzeLine(command, context).verdict;
}

/** The verdict on a line and the state the shell is left in once it has run. */
export function analyzeLine(command: string, context: AnalysisContext): LineVerdict {
  const findings = new Findings();
  const custom = context.resolvePath;
  const resolve = custom === undefined ? resolveRealPath : (absolute: string) => custom(posix.resolve(absolute));
  const analysis = new LineAnalysis(context.workspaceRoots, context.restrictToWorkspaces, resolve, findings);
  const before = context.state ?? initialShellState();
  let state: ShellState;
  try {
    state = analysis.analyseLine(command, context.cwd, context.home, before);
  } catch (error) {
    // Fail closed: whatever stopped the walk, the part it did not see may be the dangerous one,
    // and what it did to the shell is not known either.
    findings.add('high', `cannot be analysed: ${error instanceof Error ? error.message : String(error)}`);
    state = { ...before, unmodelled: before.unmodelled ?? 'a line that could not be analysed ran' };
  }
  return { verdict: findings.verdict(), state };
}

