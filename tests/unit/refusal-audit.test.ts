import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RefusalAudit, type RefusalEntry } from '../../src/core/terminals/refusal-audit.js';

// A terminal's refused destinations are audited one by one, but a flood of them is counted
// instead (CONTRACT §11 audits each refusal; the log must not become the attack).

describe('RefusalAudit', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the first refusals of a minute one by one and counts the rest in one entry', () => {
    const written: RefusalEntry[] = [];
    const audit = new RefusalAudit((entry) => written.push(entry));
    for (let index = 0; index < 1000; index++) audit.refused(`127.0.0.1:${1000 + index}`, 'loopback');
    expect(written).toHaveLength(20);
    expect(written[0]).toEqual({ destination: '127.0.0.1:1000', reason: 'loopback' });
    vi.advanceTimersByTime(60_000);
    expect(written).toHaveLength(21);
    expect(written[20]).toEqual({ destination: '127.0.0.1:1999', reason: 'loopback', suppressed: 980 });
    // A new minute starts afresh.
    audit.refused('10.0.0.1:80', 'private');
    expect(written[21]).toEqual({ destination: '10.0.0.1:80', reason: 'private' });
  });

  it('writes the count when the terminal ends before the minute does', () => {
    const written: RefusalEntry[] = [];
    const audit = new RefusalAudit((entry) => written.push(entry));
    for (let index = 0; index < 25; index++) audit.refused('169.254.169.254:80', 'link-local');
    audit.flush();
    expect(written.at(-1)).toEqual({ destination: '169.254.169.254:80', reason: 'link-local', suppressed: 5 });
    audit.flush();
    expect(written).toHaveLength(21);
  });
});
