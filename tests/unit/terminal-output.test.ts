import { describe, expect, it } from 'vitest';
import { OutputLog, plainText } from '../../src/core/terminals/terminal-output.js';

describe('plainText', () => {
  it.each([
    ['\x1b[31mred\x1b[0m \x1b[1;32mbold green\x1b[m', 'red bold green'],
    ['\x1b]0;window title\x07text', 'text'],
    ['\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\', 'link'],
    ['a\r\nb\r\n', 'a\nb\n'],
    ['10%\r50%\r100%', '100%'],
    ['abc\b\bX', 'aX'],
    ['\x1b[2K\x1b[1Gprogress', 'progress'],
    ['\x1b(Bcharset\x1b=', 'charset'],
    ['bell\x07 and nul\x00', 'bell and nul'],
    ['tabs\tkept', 'tabs\tkept'],
  ])('%j → %j', (raw, plain) => {
    expect(plainText(raw)).toBe(plain);
  });
});

describe('OutputLog', () => {
  it('logs commands as "$ <command>" lines followed by their plain output', () => {
    const log = new OutputLog(100);
    log.command('ls -la');
    log.append('\x1b[34mfile\x1b[0m\r\nother\r\n');
    log.command('echo one\necho two');
    log.append('one\r\ntw');
    expect(log.tail(100)).toBe('$ ls -la\nfile\nother\n$ echo one\n$ echo two\none\ntw');
    log.append('o\r\n');
    expect(log.tail(2)).toBe('one\ntwo');
  });

  it('keeps only the last `capacity` lines', () => {
    const log = new OutputLog(5);
    for (let index = 0; index < 1000; index++) log.append(`line ${index}\n`);
    expect(log.tail(100)).toBe(['line 995', 'line 996', 'line 997', 'line 998', 'line 999'].join('\n'));
  });
});

describe('output that could exhaust the service', () => {
  it('handles a long line of backspaces (quadratic handling would run past the test timeout)', () => {
    const raw = `${'x'.repeat(400_000)}${'\b'.repeat(399_999)}`;
    expect(plainText(raw)).toBe('x');
  });

  it('logs a line that never ends in bounded pieces', () => {
    const log = new OutputLog(10);
    for (let index = 0; index < 100; index++) log.append('y'.repeat(10_000));
    const lines = log.tail(10).split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThanOrEqual(64 * 1024);
  });
});
