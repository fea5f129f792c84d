import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sendToProvider } from '../../src/core/providers/provider-http.js';

// sendToProvider writes an ordinary body in one go and a large one (a long history window) piece
// by piece: either way the provider must receive exactly JSON.stringify of the body, with a
// Content-Length that matches it.

const received: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(parts) });
    res.end('ok');
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    }),
);

async function send(json: Record<string, unknown>) {
  let text = '';
  await sendToProvider(
    { url, headers: { 'content-type': 'application/json' }, json, signal: new AbortController().signal, timeoutMs: 5000 },
    { onResponse: () => undefined, onData: (piece) => (text += piece) },
  );
  expect(text).toBe('ok');
  const last = received.at(-1);
  if (last === undefined) throw new Error('nothing received');
  return last;
}

it.each([
  ['an ordinary body (one write)', 3, 40],
  ['a large body (written in pieces)', 40, 10_000],
])('sends %s byte for byte', async (_name, count, length) => {
  // Non-ASCII text, so a Content-Length counted in characters instead of bytes would show.
  const messages = Array.from({ length: count }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `é${'x'.repeat(length)}${index}` }));
  const json = { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true }, temperature: 0.7 };
  const expected = Buffer.from(JSON.stringify(json));
  expect(expected.length > 64 * 1024).toBe(count === 40);
  const { headers, body } = await send(json);
  expect(body.equals(expected)).toBe(true);
  expect(headers['content-length']).toBe(String(expected.length));
});

it('a body that cannot be serialised, or a call aborted before it is sent, is a rejection, never a throw', async () => {
  const before = received.length;
  const sink = { onResponse: () => undefined, onData: () => undefined };
  // JSON.stringify throws on a BigInt: the ordinary body is serialised in the caller's turn now,
  // and that must still reach the caller as the promise's rejection.
  let unserialisable: Promise<void> | undefined;
  expect(() => {
    unserialisable = sendToProvider({ url, headers: {}, json: { model: 'm', n: 1n }, signal: new AbortController().signal, timeoutMs: 5000 }, sink);
  }).not.toThrow();
  await expect(unserialisable).rejects.toThrow(TypeError);
  const controller = new AbortController();
  const aborted = sendToProvider({ url, headers: {}, json: { model: 'm' }, signal: controller.signal, timeoutMs: 5000 }, sink);
  controller.abort();
  // Aborted after the call began: the request may have gone, but the caller sees the abort.
  await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
  const abortedFirst = new AbortController();
  abortedFirst.abort();
  await expect(sendToProvider({ url, headers: {}, json: { model: 'm' }, signal: abortedFirst.signal, timeoutMs: 5000 }, sink)).rejects.toMatchObject({ name: 'AbortError' });
  // Neither the unserialisable body nor the one aborted before it began reached the provider.
  expect(received.slice(before).filter((entry) => entry.body.toString().includes('"n"'))).toHaveLength(0);
});
