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
  it('sends a command as one line: the preamble, then the command through eval reading the terminal', () => {
    expect(commandInput("echo 'hi'", 'mark')).toBe("mark; eval $'echo \\'hi\\'' </dev/tty\n");
  });

  it('sends only printable ASCII on a single line, however long the command', () => {
    const command = `echo ünï \x03 \x04 \x15\n${'x'.repeat(10_000)}`;
    const input = commandInput(command, 'true');
    expect(input.slice(0, -1)).toMatch(/^[\x20-\x7e]*$/);
    const script = input.replace(/^true; eval /, 'printf %s ').replace(/ <\/dev\/tty\n$/, '');
    expect(spawnSync('bash', ['-c', script], { encoding: 'utf8' }).stdout).toBe(command);
  });
});
