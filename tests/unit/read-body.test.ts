import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors/app-error.js';
import { readJsonBody, type BodyResult } from '../../src/rest-adapter/read-body.js';

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

interface Seen {
  result?: BodyResult;
  error?: unknown;
  /** Listeners left on the request once read: none may stay behind. */
  listeners?: number;
  destroyed?: boolean;
}

/** A server that reads each request's body with `limit`, reporting what it saw to `seen`. */
async function serverReading(limit: number, seen: (value: Seen) => void, before?: (req: IncomingMessage) => Promise<void>): Promise<number> {
  server = createServer((req, res) => {
    void (async () => {
      await before?.(req);
      try {
        const result = await readJsonBody(req as Request, limit);
        seen({ result, listeners: req.listenerCount('data') + req.listenerCount('end') + req.listenerCount('close'), destroyed: req.destroyed });
        res.end('ok');
      } catch (error) {
        seen({ error, destroyed: req.destroyed });
        if (!res.destroyed) res.end('refused');
      }
    })();
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends a POST; resolves with the reply's body, or null when the connection failed without one. */
function send(port: number, options: { body?: string[]; headers?: Record<string, string> }): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        resolve(body);
      });
    });
    req.on('error', () => {
      resolve(null);
    });
    for (const piece of options.body ?? []) req.write(piece);
    req.end();
  });
}

describe('readJsonBody', () => {
  it('reads a JSON object of declared length sent in pieces, and leaves no listener on the request', async () => {
    let seen: Seen = {};
    const port = await serverReading(1000, (value) => (seen = value));
    const pieces = ['{"message":', '"héllo",', '"n":1}'];
    const length = String(Buffer.byteLength(pieces.join('')));
    await send(port, { body: pieces, headers: { 'content-type': 'application/json', 'content-length': length } });
    expect(seen.result).toEqual({ ok: true, value: { message: 'héllo', n: 1 } });
    // Plain listeners, each taken off again (the async iterator left its own behind).
    expect(seen.listeners).toBe(0);
  });

  it('reads a chunked JSON object', async () => {
    let seen: Seen = {};
    const port = await serverReading(1000, (value) => (seen = value));
    await send(port, { body: ['{"message":', '"héllo"}'], headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
    expect(seen.result).toEqual({ ok: true, value: { message: 'héllo' } });
  });

  it('takes an empty body as none, whatever its type, and reports bad bodies as values', async () => {
    const results: Seen[] = [];
    const port = await serverReading(1000, (value) => results.push(value));
    await send(port, { headers: { 'content-type': 'text/plain' } });
    await send(port, { body: ['{"a":'], headers: { 'content-type': 'application/json' } });
    await send(port, { body: ['[1]'], headers: { 'content-type': 'application/vnd.api+json' } });
    await send(port, { body: ['{}'], headers: { 'content-type': 'text/plain' } });
    expect(results.map((seen) => seen.result)).toEqual([
      { ok: true, value: undefined },
      { ok: false, error: expect.objectContaining({ code: 'INVALID_REQUEST', message: 'Malformed JSON body' }) as unknown },
      { ok: false, error: expect.objectContaining({ code: 'INVALID_REQUEST', message: 'Request body must be a JSON object' }) as unknown },
      { ok: false, error: expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE' }) as unknown },
    ]);
  });

  it('refuses a declared length over the limit before reading, and destroys a chunked body that grows past it', async () => {
    const results: Seen[] = [];
    const port = await serverReading(10, (value) => results.push(value));
    const replies = [
      await send(port, { body: ['{"message":"far too long"}'], headers: { 'content-type': 'application/json', 'content-length': '26' } }),
      await send(port, { body: ['{"message":', '"far too long"}'], headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }),
    ];
    // The refusal reaches the client either way (the request goes, its socket stays).
    expect(replies).toEqual(['refused', 'refused']);
    for (const seen of results) {
      expect(seen.error).toBeInstanceOf(AppError);
      expect((seen.error as AppError).code).toBe('PAYLOAD_TOO_LARGE');
    }
    // Read past the limit: the rest is never read, so the request (and its connection) goes.
    expect(results[1]?.destroyed).toBe(true);
  });

  it('takes a request already read to its end as an empty body', async () => {
    let seen: Seen = {};
    const port = await serverReading(
      1000,
      (value) => (seen = value),
      (req) =>
        new Promise((resolve) => {
          // As the write guards read an empty chunked body to its end before the bridge.
          req.on('data', () => undefined);
          req.once('end', () => {
            req.pause();
            resolve();
          });
        }),
    );
    await send(port, { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } });
    expect(seen.result).toEqual({ ok: true, value: undefined });
  });
});
