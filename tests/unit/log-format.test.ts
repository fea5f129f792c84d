import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.js';
import { formatLogLine, resolveLogFormat } from '../../src/core/logger-pretty.js';

// LOG_FORMAT (issue 22): JSON for collectors, a readable line for people at a terminal.

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}

describe('log format', () => {
  it('defaults to pretty on a terminal and JSON elsewhere; a setting wins', () => {
    expect(resolveLogFormat(undefined, true)).toBe('pretty');
    expect(resolveLogFormat(undefined, false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('pretty: time, level, message and fields on one line, the URL as it is', () => {
    const { lines, sink } = capture();
    createLogger('info', sink, 'pretty').info({ url: 'http://127.0.0.1:3000', database: 'sqlite' }, 'listening on http://127.0.0.1:3000');
    expect(lines.join('')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening on http:\/\/127\.0\.0\.1:3000 url=http:\/\/127\.0\.0\.1:3000 database=sqlite\n$/);
  });

  it('pretty: quotes values with spaces, shows a stack below its line, keeps redaction', () => {
    const { lines, sink } = capture();
    const logger = createLogger('info', sink, 'pretty');
    logger.warn({ reason: 'two words', apiKey: 'sk-live' }, 'careful');
    logger.error({ err: new Error('broke') }, 'failed');
    const [warning, error] = lines;
    expect(warning).toMatch(/WARN {2}careful reason="two words" apiKey=\[redacted\]\n$/);
    expect(error).toMatch(/ERROR failed\n {4}Error: broke\n\s+at /);
  });

  it('a line that is not JSON passes through untouched', () => {
    expect(formatLogLine('plain text\n', false)).toBe('plain text\n');
  });
});
