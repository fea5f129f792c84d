import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/core/config/load-config.js';
import { writeGuards } from '../../src/http/write-guards.js';

const config = { ALLOWED_ORIGINS: [], HOST: '127.0.0.1', OIDC_BASE_URL: undefined } as unknown as Config;

function post(path: string, contentType: string | undefined): Request {
  return {
    method: 'POST',
    path,
    originalUrl: path,
    url: path,
    headers: { host: '127.0.0.1:3000', 'content-length': '2', ...(contentType ? { 'content-type': contentType } : {}) },
    socket: { localPort: 3000 },
  } as unknown as Request;
}

describe('write guards on a JSON body', () => {
  it('let a JSON write to the API on at once, without waiting for a promise', () => {
    // The check of a body that is not JSON may have to read it; a JSON one never needs that.
    const guard = writeGuards(config);
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/problem+json']) {
      let passed = false;
      guard(post('/api/unified/stream', type), { locals: {} } as unknown as Response, () => {
        passed = true;
      });
      expect(passed, type).toBe(true);
    }
  });

  it('still refuse a body that is not JSON', async () => {
    const guard = writeGuards(config);
    const sent: { status?: number; body?: unknown } = {};
    const res = {
      locals: {},
      headersSent: false,
      setHeader: () => undefined,
      status(code: number) {
        sent.status = code;
        return this;
      },
      json(body: unknown) {
        sent.body = body;
      },
    } as unknown as Response;
    let passed = false;
    guard(post('/api/unified/stream', 'text/plain'), res, () => {
      passed = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(passed).toBe(false);
    expect(sent.status).toBe(415);
  });
});
