import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sendJsonReply } from '../../src/rest-adapter/json-reply.js';

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

const data = { success: true, response: 'héllo "world"\n', nested: { list: [1, 2.5, null], emoji: '🙂' }, missing: undefined };

/** The raw reply (status line, headers but Date, body) of `method path` with `headers`. */
async function rawReply(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i] !== 'Date') lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        resolve(`${res.statusCode}\n${lines.join('\n')}\n\n${body}`);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** An app answering /express/:status with Express's res.json and /direct/:status with sendJsonReply. */
async function start(): Promise<number> {
  const app = express();
  app.use((_req, res, next) => {
    res.setHeader('X-Request-Id', 'r1');
    res.setHeader('X-RateLimit-Limit', '60');
    next();
  });
  app.all('/express/:status', (req, res) => {
    res.status(Number(req.params.status)).json(data);
  });
  app.all('/direct/:status', (req, res) => {
    sendJsonReply(res, Number(req.params.status), data);
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('sendJsonReply', () => {
  it('sends byte for byte what res.status().json() sends, for every method and status', async () => {
    const port = await start();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'GET', 'HEAD']) {
      for (const status of [200, 201, 202, 204, 400, 503]) {
        expect(await rawReply(port, method, `/direct/${status}`), `${method} ${status}`).toBe(await rawReply(port, method, `/express/${status}`));
      }
    }
  });

  it('keeps Express freshness for GET: a matching If-None-Match is a 304', async () => {
    const port = await start();
    const first = await rawReply(port, 'GET', '/direct/200');
    const etag = /ETag: (.+)/.exec(first)?.[1] ?? '';
    expect(etag).toMatch(/^W\/"/);
    expect(await rawReply(port, 'GET', '/direct/200', { 'if-none-match': etag })).toMatch(/^304\n/);
  });

  it('writes a POST reply itself rather than through res.json', () => {
    // Express's json/send re-read and re-parse the Content-Type they set: what this saves.
    const headers = new Map<string, string>();
    const res = {
      app: express(),
      req: { method: 'POST' },
      statusCode: 200,
      hasHeader: (name: string) => headers.has(name.toLowerCase()),
      setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
      json: vi.fn(),
      status: vi.fn(),
      end: vi.fn(),
    };
    sendJsonReply(res as unknown as Response, 201, { a: 1 });
    expect(res.json).not.toHaveBeenCalled();
    expect(res.statusCode).toBe(201);
    expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.end).toHaveBeenCalledWith(Buffer.from('{"a":1}'));
  });
});
