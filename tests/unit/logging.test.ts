import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../../src/core/logger.js';

describe('secrets in logs', () => {
  it('redacts apiKey and access_token query values, whatever their case', () => {
    expect(redactUrl('/api/openai/models?apiKey=sk-123&x=1')).toBe('/api/openai/models?apiKey=[redacted]&x=1');
    expect(redactUrl('/api/streams/1?ACCESS_TOKEN=eyJ&after=3')).toBe('/api/streams/1?ACCESS_TOKEN=[redacted]&after=3');
    expect(redactUrl('/trpc/models.listOpenai?input=%7B%22json%22%3A%7B%22apiKey%22%3A%22sk-1%22%7D%7D')).toBe('/trpc/models.listOpenai?input=[redacted]');
    expect(redactUrl('/trpc/events.follow?connectionParams=%7B%22token%22%3A%22eyJ%22%7D&input=%7B%7D')).toBe(
      '/trpc/events.follow?connectionParams=[redacted]&input=[redacted]',
    );
    expect(redactUrl('/auth/callback?code=abc&state=s')).toBe('/auth/callback?code=[redacted]&state=s');
    expect(redactUrl('/api/status')).toBe('/api/status');
    expect(redactUrl('/x?%E0=1&token=t')).toBe('/x?%E0=1&token=[redacted]');
  });

  it('censors secret fields in logged objects', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger('info', sink);
    logger.info({ body: { apiKey: 'sk-live', message: 'hi' }, req: { headers: { authorization: 'Bearer abc' } }, environment: { A: 'b' } }, 'x');
    const text = lines.join('');
    expect(text).not.toContain('sk-live');
    expect(text).not.toContain('Bearer abc');
    expect(text).not.toContain('"A":"b"');
    expect(text).toContain('"message":"hi"');
  });
});
