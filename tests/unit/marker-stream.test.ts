import { describe, expect, it } from 'vitest';
import { MarkerStream, type Marker } from '../../src/core/terminals/marker-stream.js';

function collect(chunks: string[], nonce = 'abc') {
  let output = '';
  const markers: Marker[] = [];
  const stream = new MarkerStream(nonce, (raw) => (output += raw), (marker) => markers.push(marker));
  for (const chunk of chunks) stream.push(chunk);
  return { output, markers, stream, getOutput: () => output };
}

const started = '\x1b]6973;B;abc\x07';
const prompt = (code: number) => `\x1b]6973;D;abc;${code}\x07`;

describe('MarkerStream', () => {
  it('separates output from discard, start and prompt markers', () => {
    const { output, markers } = collect([`\x1b]6973;F;abc\x07${started}hello\r\n${prompt(0)}`]);
    expect(output).toBe('hello\r\n');
    expect(markers).toEqual([{ kind: 'flush' }, { kind: 'started' }, { kind: 'prompt', exitCode: 0 }]);
  });

  it('finds a marker cut anywhere between chunks', () => {
    const whole = `out${started}more${prompt(130)}after`;
    for (let cut = 1; cut < whole.length; cut++) {
      const { output, markers } = collect([whole.slice(0, cut), whole.slice(cut)]);
      expect({ cut, output, markers }).toEqual({ cut, output: 'outmoreafter', markers: [{ kind: 'started' }, { kind: 'prompt', exitCode: 130 }] });
    }
  });

  it('passes through markers of another nonce, unknown kinds, and look-alikes as output', () => {
    const foreign = '\x1b]6973;D;other;0\x07';
    const unknown = '\x1b]6973;X;abc\x07';
    const noCode = '\x1b]6973;D;abc;nan\x07';
    const { output, markers } = collect([`${foreign}${unknown}${noCode}`]);
    expect(markers).toEqual([]);
    expect(output).toBe(`${foreign}${unknown}${noCode}`);
  });

  it('does not let a look-alike printed just before a real marker swallow it', () => {
    const { output, markers } = collect([`hello\x1b]6973;${prompt(7)}`]);
    expect(markers).toEqual([{ kind: 'prompt', exitCode: 7 }]);
    expect(output).toBe('hello\x1b]6973;');
  });

  it('gives up on an unterminated look-alike instead of holding output back forever', () => {
    const lookAlike = `\x1b]6973;${'x'.repeat(200)}`;
    const { output } = collect([lookAlike, 'tail']);
    expect(output).toBe(`${lookAlike}tail`);
  });

  it('releases a held partial marker when flushed', () => {
    const { stream, getOutput } = collect(['end\x1b]69']);
    expect(getOutput()).toBe('end');
    stream.flush();
    expect(getOutput()).toBe('end\x1b]69');
  });
});
