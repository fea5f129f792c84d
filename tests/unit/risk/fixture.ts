import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeLine, type AnalysisContext, type RiskLevel } from '../../../src/core/security/risk-analysis.js';
import type { ShellState } from '../../../src/core/security/shell-state.js';

/**
 * The risk tables, one file per rule family (named after the rule's source file), share this
 * fixture. Every row runs against real directories: a workspace W (cwd unless said otherwise)
 * holding `src/`, `README.md`, `etc-link -> /etc` and `inner -> W/src`; a second workspace W2; a
 * home directory outside both. The fixture lives under /var/tmp, not under /tmp, because /tmp is
 * a zone of its own and would hide "outside the workspaces".
 */
export interface Row {
  command: string;
  level: RiskLevel;
  /** A substring some reason must contain. */
  reason: string;
  /** Where the shell is: W (default), W/src, or unknown. */
  cwd?: 'src' | 'unknown';
  /** `unrestricted`: WORKSPACE_RESTRICTION_ENABLED=false; `tmp-workspace`: a workspace lies under /tmp. */
  context?: 'unrestricted' | 'tmp-workspace';
}

export const row = (command: string, level: RiskLevel, reason: string, options: Partial<Row> = {}): Row => ({ command, level, reason, ...options });

export const paths = { base: '', workspace: '', second: '', home: '', tmpWorkspace: '' };

/** Creates the fixture's folders for the calling test file and removes them after it. */
export function useRiskFixture(): void {
  beforeAll(() => {
    paths.base = realpathSync(mkdtempSync(join('/var/tmp', 'risk-fixture-')));
    paths.workspace = join(paths.base, 'w');
    paths.second = join(paths.base, 'w2');
    paths.home = join(paths.base, 'home');
    for (const directory of [join(paths.workspace, 'src'), paths.second, join(paths.home, '.ssh')]) mkdirSync(directory, { recursive: true });
    writeFileSync(join(paths.workspace, 'README.md'), '# fixture\n');
    symlinkSync('/etc', join(paths.workspace, 'etc-link'));
    symlinkSync(join(paths.workspace, 'src'), join(paths.workspace, 'inner'));
    paths.tmpWorkspace = realpathSync(mkdtempSync('/tmp/risk-workspace-'));
  });
  afterAll(() => {
    if (paths.base !== '') rmSync(paths.base, { recursive: true, force: true });
    if (paths.tmpWorkspace !== '') rmSync(paths.tmpWorkspace, { recursive: true, force: true });
  });
}

export function contextFor(candidate: Pick<Row, 'cwd' | 'context'> = {}, state?: ShellState): AnalysisContext {
  const { workspace, second, home, tmpWorkspace } = paths;
  const cwd = candidate.cwd === 'unknown' ? null : candidate.cwd === 'src' ? join(workspace, 'src') : workspace;
  return {
    cwd,
    home,
    workspaceRoots: candidate.context === 'tmp-workspace' ? [workspace, second, tmpWorkspace] : [workspace, second],
    restrictToWorkspaces: candidate.context !== 'unrestricted',
    ...(state === undefined ? {} : { state }),
  };
}

/** `{W}`, `{W2}` and `{HOME}` in a row stand for the fixture's real paths. */
export function expand(command: string): string {
  return command.replaceAll('{W2}', paths.second).replaceAll('{W}', paths.workspace).replaceAll('{HOME}', paths.home);
}

export function label(candidate: Row): string {
  const where = [candidate.cwd === undefined ? '' : `cwd=${candidate.cwd}`, candidate.context ?? ''].filter(Boolean).join(', ');
  return `${JSON.stringify(candidate.command)}${where === '' ? '' : ` (${where})`} → ${candidate.level}`;
}

/** Judges one line in a shell left as `state`, checks the verdict, and returns the state after it. */
export function checkRow(candidate: Row, state?: ShellState): ShellState {
  const { verdict, state: after } = analyzeLine(expand(candidate.command), contextFor(candidate, state));
  expect({ level: verdict.level, reasons: verdict.reasons }).toEqual({
    level: candidate.level,
    reasons: expect.arrayContaining([expect.stringContaining(candidate.reason)]),
  });
  expect(verdict.reasons.length).toBeGreaterThan(0);
  expect(new Set(verdict.reasons).size).toBe(verdict.reasons.length);
  return after;
}

/** A table of single lines, each judged in a fresh shell. */
export function riskTable(title: string, rows: readonly Row[]): void {
  describe(title, () => {
    it.each(rows.map((candidate) => [label(candidate), candidate] as const))('%s', (_name, candidate) => {
      checkRow(candidate);
    });
    it('has no duplicate rows', () => {
      const keys = rows.map(label);
      expect(new Set(keys).size).toBe(keys.length);
    });
  });
}

/**
 * A table of sequences: the lines of each are sent one after another to the same terminal, each
 * judged in the state the ones before it left (CONTRACT §11, "Shell state").
 */
export function sequenceTable(title: string, sequences: readonly (readonly Row[])[]): void {
  describe(title, () => {
    it.each(sequences.map((steps) => [steps.map(label).join(' ; then '), steps] as const))('%s', (_name, steps) => {
      let state: ShellState | undefined;
      for (const step of steps) state = checkRow(step, state);
    });
  });
}
