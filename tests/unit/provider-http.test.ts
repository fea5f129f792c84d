import { expect, it } from 'vitest';
import { sendToProvider } from '../../src/core/providers/provider-http.js';

// sendToProvider reports every failure through its promise: a header node:http refuses to send
// (it throws at once) must not escape as a synchronous throw past a caller's `.catch`.

it('rejects, never throws, when node:http refuses a header', async () => {
  const sink = { onResponse: () => undefined, onData: () => undefined };
  let sent: Promise<void> | undefined;
  expect(() => {
    sent = sendToProvider(
      { url: 'http://127.0.0.1:9/v1/chat/completions', headers: { authorization: 'Bearer sk-a\r\nx-injected: 1' }, json: {}, signal: new AbortController().signal, timeoutMs: 1000 },
      sink,
    );
  }).not.toThrow();
  await expect(sent).rejects.toThrow(/header/i);
});
