import { describe, expect, it } from 'vitest';
import { OutputCap } from '../../src/core/chat/output-cap.js';

// The cap a provider call's output is held to (CONTRACT §13), attacked by a provider that ignores
// the max_tokens it was sent. A limit of 20 allows 20 + 8 + 2 = 30 tokens before the cut.

const capOf = (limit: number | undefined) => new OutputCap(limit, new AbortController().signal);

describe('OutputCap', () => {
  it('counts tool-call arguments and reasoning as text: the piece past the limit and the slack cuts the call, whichever kind it is', () => {
    for (const last of ['text', 'other'] as const) {
      const cap = capOf(20);
      for (let index = 0; index < 30; index++) {
        if (index % 2 === 0) expect(cap.take('w')).toBe(true);
        else cap.count('{"a');
      }
      expect(cap.cut).toBe(false);
      if (last === 'text') expect(cap.take('w')).toBe(false);
      else cap.count('1}');
      expect(cap.cut, last).toBe(true);
      expect(cap.signal.aborted).toBe(true);
      // Whatever is still read from the chunk is dropped, and not kept for the worst case either.
      expect(cap.take('more')).toBe(false);
    }
  });

  it('counts a huge piece by its size: one piece holding the whole overshoot is cut at once, and kept for the worst case up to the limit', () => {
    const text = capOf(20);
    expect(text.take('x'.repeat(256 * 31))).toBe(false);
    expect(text.cut).toBe(true);
    // Dropped from the answer, but streamed: the worst case sees at least `limit` bytes of it.
    expect(text.unshown).toBe('x'.repeat(20));
    const call = capOf(20);
    call.count(JSON.stringify({ command: 'y'.repeat(100_000) }));
    expect(call.cut).toBe(true);
    expect(call.unshown).toHaveLength(20);
  });

  it('lets an honest answer through: pieces of up to 256 characters (longer than any token) count one each, empty ones none', () => {
    const cap = capOf(20);
    for (let index = 0; index < 30; index++) expect(cap.take('z'.repeat(256))).toBe(true);
    for (let index = 0; index < 100; index++) cap.count('');
    expect(cap.take('')).toBe(true);
    expect(cap.cut).toBe(false);
  });

  it('keeps what it counts beside the text for the worst case, no more than the limit needs', () => {
    const cap = capOf(20);
    cap.count('ls_files');
    cap.count('{"path":');
    expect(cap.unshown).toBe('ls_files{"path":');
    cap.count('"src/core"}');
    expect(cap.unshown).toBe('ls_files{"path":"src');
    // Text is the answer's, kept by the exchange itself.
    expect(cap.take('shown')).toBe(true);
    expect(cap.unshown).toHaveLength(20);
  });

  it('without a limit never cuts, uses the job’s signal, and keeps all the other output for the worst case', () => {
    const job = new AbortController();
    const cap = new OutputCap(undefined, job.signal);
    expect(cap.signal).toBe(job.signal);
    for (let index = 0; index < 1000; index++) cap.count('ab');
    expect(cap.take('x'.repeat(1_000_000))).toBe(true);
    expect(cap.unshown).toHaveLength(2000);
    expect(cap.cut).toBe(false);
  });

  it('tells its own cut from the job’s abort', () => {
    const job = new AbortController();
    const cap = new OutputCap(20, job.signal);
    job.abort();
    expect(cap.signal.aborted).toBe(true);
    expect(cap.cut).toBe(false);
  });
});
