import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ansiCQuoted, commandInput } from '../../src/core/terminals/shell-input.js';

// What reaches the terminal's bash must be exactly what the caller sent: checked against a real
// bash, with the characters that quoting usually gets wrong.

const awkward = [
  'plain',
  "it's",
  'back\\slash \\\\ and \\n literally',
  'line one\nline two\n',
  'tab\tcarriage\rreturn',
  '$HOME `id` $(id) !! ${x:-y}',
  '"double" \'single\' $\'ansi\'',
  'control \x01\x07\x1b[31m\x7f',
  'unicode: ünïcödé 😀 中文',
  '',
];

function bashEcho(quoted: string): string {
  const result = spawnSync('bash', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout;
}

describe('ansiCQuoted', () => {
  it.each(awkward)('keeps %j exactly', (text) => {
    expect(bashEcho(ansiCQuoted(text))).toBe(text);
  });
});

describe('commandInput', () => {
  it('sends a short command as one line: the start marker, then the command through eval', () => {
    expect(commandInput("echo 'hi'", 'mark', 'n0nce')).toBe("mark; eval $'echo \\'hi\\''\n");
  });

  it('sends only printable ASCII, so no terminal setting can give a byte a meaning', () => {
    const input = commandInput('echo ünï \x03 \x04 \x15', 'mark', 'n0nce');
    expect(input.slice(0, -1)).toMatch(/^[\x20-\x7e]*$/);
  });

  it('sends a command past the terminal line limit as short base64 lines that decode to it', () => {
    const command = `echo ${'x'.repeat(10_000)} # ünï`;
    const input = commandInput(command, 'true', 'n0nce');
    const lines = input.split('\n');
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(200);
    const script = input.replace(/^true; eval /, 'printf %s ');
    expect(spawnSync('bash', ['-c', script], { encoding: 'utf8' }).stdout).toBe(command);
  });
});
