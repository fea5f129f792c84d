import { describe, expect, it } from 'vitest';
import { ruleRegistry } from '../../src/core/security/command-rules.js';
import type { CommandRule } from '../../src/core/security/command-invocation.js';

// The command-rule registry refuses a second rule for one name (issue 19's rule hygiene): with
// last-one-wins, one of them would be dead without anyone noticing.

const quiet: CommandRule = () => undefined;

describe('ruleRegistry', () => {
  it('refuses a name two families both define, naming both', () => {
    expect(() => ruleRegistry({ readOnly: new Map([['more', quiet]]), interactive: new Map([['vi', quiet], ['more', quiet]]) })).toThrow(
      'two rules for the command more: in readOnly and in interactive',
    );
  });

  it('keeps every rule when names are unique', () => {
    const registry = ruleRegistry({ a: new Map([['ls', quiet]]), b: new Map([['rm', quiet]]) });
    expect([...registry.keys()]).toEqual(['ls', 'rm']);
  });

  it('holds for the rules the service loads', async () => {
    // Importing the analysis builds its registry: a duplicate would throw here.
    await expect(import('../../src/core/security/risk-analysis.js')).resolves.toBeDefined();
  });
});
