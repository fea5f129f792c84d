import { describe, expect, it } from 'vitest';
import { analyzeCommand, maxLevel, riskOrder, type RiskLevel } from '../../../src/core/security/risk-analysis.js';
import { contextFor, paths, row, riskTable, useRiskFixture } from './fixture.js';

useRiskFixture();

riskTable('lines that do not parse, and anything too deep to follow', [
  // Lines that do not parse are refused analysis, and so is anything too deep to follow.
  row("echo 'unterminated", 'high', 'does not parse: 1:6: reached EOF without closing quote'),
  row('ls |', 'high', 'does not parse'),
  row('cat <<EOF', 'high', 'does not parse'),
  row("bash -c 'echo \"unterminated'", 'high', 'does not parse'),
  row('', 'low', 'nothing to run'),
  row('# just a comment', 'low', 'nothing to run'),
]);

describe('verdict shape', () => {
  it('lists the most severe reason first', () => {
    const verdict = analyzeCommand('ls; mkdir out; rm -rf build; rm -rf /', contextFor());
    expect(verdict.level).toBe('critical');
    expect(verdict.reasons[0]).toContain('removes the root directory');
    expect(verdict.reasons.at(-1)).toBe('read-only inspection');
  });

  it('orders levels', () => {
    expect(maxLevel('low', 'high', 'medium')).toBe('high');
    expect(maxLevel()).toBe('low');
    expect(['critical', 'low', 'high', 'medium'].sort((a, b) => riskOrder(a as RiskLevel, b as RiskLevel))).toEqual(['low', 'medium', 'high', 'critical']);
  });

  it('refuses a line with more commands than it will walk', () => {
    const verdict = analyzeCommand(Array.from({ length: 2100 }, () => 'ls').join('; '), contextFor());
    expect(verdict).toEqual({ level: 'high', reasons: expect.arrayContaining(['too many commands to analyse']) });
  });

  it('fails closed on nesting too deep for the parser, and keeps working afterwards', () => {
    const context = contextFor();
    const deep = analyzeCommand(`${'('.repeat(3000)}ls${')'.repeat(3000)}`, context);
    expect(deep.level).toBe('high');
    expect(deep.reasons.join('\n')).toContain('does not parse');
    expect(analyzeCommand('ls -la', context)).toEqual({ level: 'low', reasons: ['read-only inspection'] });
  });

  it('uses a custom resolver when one is given', () => {
    const context = { ...contextFor(), resolvePath: (absolute: string) => absolute.replace(/^\/outside\b/, paths.workspace) };
    expect(analyzeCommand('cat /outside/README.md', context).level).toBe('low');
    expect(analyzeCommand('cat /elsewhere/README.md', context).level).toBe('high');
  });
});
