import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { ProviderTimeoutError } from '../../src/core/providers/provider-errors.js';
import { sendToProvider } from '../../src/core/providers/provider-http.js';

// PROVIDER_TIMEOUT_MS bounds the wait for the headers and every silence inside the body, never
// the whole answer: an answer that keeps coming runs as long as it takes. The timer is not
// refreshed per chunk (each chunk only notes its time), so this holds the re-arming to both sides
// of that rule, against a real socket.

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** Answers 200 and then writes `chunks` pieces `everyMs` apart, then stays silent with the request open. */
async function dripping(chunks: number, everyMs: number): Promise<string> {
  server = createServer((_req, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sent = 0;
    const drip = setInterval(() => {
      res.write(`data: ${sent}\n\n`);
      sent += 1;
      if (sent === chunks) clearInterval(drip);
    }, everyMs);
    res.on('close', () => {
      clearInterval(drip);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`;
}

it('lets an answer run far past the timeout while it keeps coming, and ends it one timeout after it went silent', async () => {
  const url = await dripping(12, 40);
  const arrivals: number[] = [];
  const started = performance.now();
  const outcome = await sendToProvider(
    { url, headers: {}, json: {}, signal: new AbortController().signal, timeoutMs: 150 },
    {
      onResponse: () => undefined,
      onData: () => {
        arrivals.push(performance.now() - started);
      },
    },
  ).then(
    () => null,
    (error: unknown) => error,
  );
  const endedAt = performance.now() - started;
  // Every chunk came although the answer lasted three times the timeout.
  expect(arrivals.length).toBeGreaterThanOrEqual(6);
  expect(arrivals.at(-1)).toBeGreaterThan(2 * 150);
  expect(outcome).toBeInstanceOf(ProviderTimeoutError);
  expect(outcome).toMatchObject({ phase: 'idle', timeoutMs: 150 });
  // Not before the silence reached the timeout, nor long after.
  const silence = endedAt - (arrivals.at(-1) ?? 0);
  expect(silence).toBeGreaterThanOrEqual(150 - 2);
  expect(silence).toBeLessThan(150 + 200);
});

it('still times out a provider that never answers, as a first-byte timeout', async () => {
  server = createServer(() => {
    // Never answers.
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chat`;
  const started = performance.now();
  const outcome = await sendToProvider({ url, headers: {}, json: {}, signal: new AbortController().signal, timeoutMs: 120 }, { onResponse: () => undefined, onData: () => undefined }).then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toMatchObject({ phase: 'first-byte' });
  expect(performance.now() - started).toBeGreaterThanOrEqual(120 - 2);
});
