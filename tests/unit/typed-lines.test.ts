import { appendFileSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIdOf, knownProgramOf } from '../../src/core/terminals/executable-identity.js';
import { AppError } from '../../src/core/errors/app-error.js';
import { echoesFromSettings } from '../../src/core/terminals/terminal-echo.js';
import { TypedLines, TypedRecord } from '../../src/core/terminals/typed-lines.js';

// CONTRACT §11 "Typed input": what a shell or interpreter in the foreground may be sent, a line
// at a time, and what the audit of other programs' input keeps.

function refusal(run: () => unknown): Record<string, unknown> {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return { code: error.code, ...error.details };
    throw error;
  }
  throw new Error('not refused');
}

describe('typed lines for a shell or an interpreter', () => {
  it('ends a line at CR, at LF and once at CRLF, across frames too', () => {
    const lines = new TypedLines(100);
    expect(lines.take('ls -la')).toEqual([]);
    expect(lines.partial).toBe('ls -la');
    expect(lines.take('\r')).toEqual([{ kind: 'line', text: 'ls -la' }]);
    expect(lines.take('\npwd\r\necho a b\n')).toEqual([{ kind: 'line', text: 'pwd' }, { kind: 'line', text: 'echo a b' }]);
    expect(lines.take('\r\r')).toEqual([{ kind: 'line', text: '' }, { kind: 'line', text: '' }]);
  });

  it('takes Ctrl-C (dropping the line so far) and Ctrl-D on an empty line only', () => {
    const lines = new TypedLines(100);
    expect(lines.take('rm -r x\u0003ls\r')).toEqual([{ kind: 'interrupt' }, { kind: 'line', text: 'ls' }]);
    expect(lines.take('abc\u0004')).toEqual([]);
    expect(lines.take('\u0003\u0004')).toEqual([{ kind: 'interrupt' }, { kind: 'eof' }]);
  });

  it.each([
    ['an arrow key', 'ls\u001b[A\r', 'U+001B'],
    ['backspace', 'rm -r buildx\u007f\r', 'U+007F'],
    ['Ctrl-H', 'ab\bc', 'U+0008'],
    ['Ctrl-U (kill the line)', 'safe\u0015rm -r x\r', 'U+0015'],
    ['Ctrl-V (next character literally)', '\u0016\r', 'U+0016'],
    ['a bracketed paste', '\u001b[200~rm -r x\u001b[201~', 'U+001B'],
    ['a C1 control', 'a\u009bA', 'U+009B'],
    ['NUL', 'ls\u0000', 'U+0000'],
    ['a tab (readline would complete the word)', 'shre\t -u f\r', 'U+0009'],
  ])('refuses %s, and nothing of that frame counts', (_name, data, character) => {
    const lines = new TypedLines(100);
    lines.take('echo ');
    expect(refusal(() => lines.take(data))).toMatchObject({ code: 'INVALID_REQUEST', reason: 'control_sequence', character });
    expect(lines.partial).toBe('echo ');
  });

  it('refuses and drops a line past the length limit', () => {
    const lines = new TypedLines(8);
    expect(refusal(() => lines.take('123456789'))).toMatchObject({ reason: 'too_long', maxLength: 8 });
    expect(lines.partial).toBe('');
    expect(lines.take('ok\r')).toEqual([{ kind: 'line', text: 'ok' }]);
  });
});

describe('typed input to other programs, kept for the audit', () => {
  it('gives each ended line once, control characters kept, long lines cut', () => {
    const record = new TypedRecord(5);
    expect(record.take('ab')).toEqual([]);
    expect(record.take('c\r\n:!x\u001b\r')).toEqual(['abc', ':!x\u001b']);
    expect(record.take('1234567\r')).toEqual(['12345', '67']);
  });
});

describe('whether the terminal echoes, from stty -g', () => {
  it.each([
    ['readline at a prompt (raw: draws what is typed itself)', '6c02:5:4bf:8a31:3:1c:7f:15:4:0:1:0', true],
    ['read -s (canonical, echo off)', '6d02:5:4bf:8a13:3:1c:7f:15:4:0:1:0', false],
    ['cat (canonical, echo on)', '6d02:5:4bf:8a3b:3:1c:7f:15:4:0:1:0', true],
    ['garbage', 'not-stty', null],
  ])('%s', (_name, settings, echoes) => {
    expect(echoesFromSettings(settings)).toBe(echoes);
  });
});

describe('which known program an executable is, by build id', () => {
  it('recognises a renamed copy of bash, even with bytes appended, and not a different program', () => {
    const folder = mkdtempSync(join('/var/tmp', 'build-id-'));
    try {
      const copy = join(folder, 'vim');
      copyFileSync('/bin/bash', copy);
      appendFileSync(copy, Buffer.from([0]));
      const shells = (name: string) => name === 'bash' || name === 'dash';
      expect(buildIdOf(copy)).toBe(buildIdOf('/bin/bash'));
      expect(knownProgramOf(copy, shells)).toBe('bash');
      expect(knownProgramOf('/usr/bin/env', shells)).toBeNull();
      expect(buildIdOf(join(folder, 'missing'))).toBeNull();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
